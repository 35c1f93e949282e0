"""Synthesis on NVIDIA Triton Inference Server: a model repository to serve, and a
client engine that renders through one or more servers.

Why Triton and not a server of our own: a publisher's GPU servers already run
Triton for other models; its dynamic batcher, instance groups and metrics are what
a home-made server would have to grow. The studio's part is small:

* :mod:`.config` -- the model's ``config.pbtxt``, its figures taken from the
  benchmark, validated against Triton's own schema (the protobuf definitions
  ``tritonclient`` ships);
* :mod:`.model` -- the voice's ONNX graph with the interface the client speaks
  (ids + lengths + scales -> padded audio + each item's audio length);
* :mod:`.export` -- the repository writer;
* :mod:`.client` -- :class:`~studio.engine.triton.client.TritonEngine`, the engine;
* :mod:`.server` -- a Triton server for machines without a GPU server (PyTriton),
  run as ``python -m studio.engine.triton.server`` in its own environment.

``tritonclient`` and ``onnx`` are imported inside the functions that need them, so
importing this package costs nothing.
"""
