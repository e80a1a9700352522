"""The viewer's latency study (``python -m benchmarks.viewer.latency``)."""
