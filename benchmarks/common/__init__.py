"""Code the studies share: script helpers (:mod:`.scripts`), robots and the model under test (:mod:`.robots`),
the CPU-load probe (:mod:`.load`), measurements (:mod:`.measure`) and the lab's random streams (:mod:`.streams`)."""
