"""Layer 11, training: typed training configuration, learning-rate and KL schedules, the resumable
(DDP-capable) :class:`Trainer`."""
