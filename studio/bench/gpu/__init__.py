"""The GPU check: prepared on any machine (:mod:`~studio.bench.gpu.prepare`, with the
wheels of :mod:`~studio.bench.gpu.wheels`), run on a GPU machine lent for minutes
(:mod:`~studio.bench.gpu.check`, its measurements in :mod:`~studio.bench.gpu.measures`),
reported row by row (:mod:`~studio.bench.gpu.rows`). ``bench/gpu_prepare.sh`` and
``bench/gpu_check.sh`` are the two commands.
"""
