"""The Layers view: a thread's history by layer, what faded, and links one click away."""
