"""The GPU check: prepared on any machine (:mod:`~studio.measure.gpu.prepare`, with the
wheels of :mod:`~studio.measure.gpu.wheels`), run on a GPU machine lent for minutes
(:mod:`~studio.measure.gpu.check`, its measurements in :mod:`~studio.measure.gpu.measures`),
reported row by row (:mod:`~studio.measure.gpu.rows`). ``bench/gpu_prepare.sh`` and
``bench/gpu_check.sh`` are the two commands.
"""
