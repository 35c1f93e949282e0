"""The engine stack: the one way to build an engine for a preset (voice, device, streams or
batching, isolation) and the model process it runs in, so a native crash costs a sentence."""
