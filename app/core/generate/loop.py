"""The present→past loop of one generation, greedy: the prompt's run, then one run per new
token, each fed the token the last one chose and the cache it gave back.

Two ways to feed it. A plain run hands ORT numpy arrays and gets numpy arrays back; on the
CPU the cache it returns is fed back as it is, without a copy. With IO binding the cache
stays where the provider made it (the GPU's memory): each step binds the last step's
present OrtValues as its past, and only the logits come to the host. The mask's ones are
made once for the longest context, and each step takes a view of them."""

from __future__ import annotations

import time

import numpy as np

from app.core.session.decoder import Decoder

#: providers whose cache lives off the host, where IO binding saves a copy each way per step
DEVICE_PROVIDERS = {"CUDAExecutionProvider": "cuda", "TensorrtExecutionProvider": "cuda",
                    "DmlExecutionProvider": "dml"}


def greedy(logits: np.ndarray) -> np.ndarray:
    """The next token of each sequence: the most likely at the last position."""
    last = logits[:, -1, :] if logits.ndim == 3 else logits
    return np.argmax(last, axis=-1)


class CacheLoop:
    """One session's generation loop (see the module docstring)."""

    def __init__(self, session, decoder: Decoder, max_context: int, batch: int, io_binding: bool = False):
        self.session, self.decoder = session, decoder
        self.output_names = [o.name for o in session.get_outputs()]
        self.logits = next((n for n in self.output_names if "logit" in n.lower()), self.output_names[0])
        self.presents = {c.name: c.output for c in decoder.cache if c.output}
        self.fixed = [c.name for c in decoder.cache if not c.output]    # cross-attention: fed the same each step
        types = {i.name: i.type for i in session.get_inputs()}
        self.ids_dtype = _dtype(types[decoder.ids])
        self.mask_dtype = _dtype(types[decoder.mask]) if decoder.mask else None
        self.positions_dtype = _dtype(types[decoder.positions]) if decoder.positions else None
        self.ones = np.ones(batch * max_context, self.mask_dtype or np.int64)
        self.batch = batch
        provider = session.get_providers()[0]
        self.device = DEVICE_PROVIDERS.get(provider, "cpu")
        self.binding = session.io_binding() if io_binding else None
        self.cache: dict = {}
        self.context = 0

    def prefill(self, feeds: dict) -> tuple[np.ndarray, int]:
        """The prompt's run on the plan's prefill `feeds`: (next tokens, ns)."""
        started = time.perf_counter_ns()
        logits = self._run(feeds, {})
        tokens = greedy(logits)
        elapsed = time.perf_counter_ns() - started
        self.context = feeds[self.decoder.ids].shape[-1]
        return tokens, elapsed

    def step(self, tokens: np.ndarray) -> tuple[np.ndarray, int]:
        """One new token per sequence after the cache: (next tokens, ns)."""
        started = time.perf_counter_ns()
        decoder, batch, context = self.decoder, self.batch, self.context + 1
        feeds = {decoder.ids: tokens.astype(self.ids_dtype).reshape(batch, 1)}
        if decoder.mask:
            feeds[decoder.mask] = self.ones[:batch * context].reshape(batch, context)
        if decoder.positions:
            feeds[decoder.positions] = np.full((batch, 1), context - 1, self.positions_dtype)
        if decoder.cache_branch:
            feeds[decoder.cache_branch] = np.ones(1, bool)
        logits = self._run(feeds, self.cache)
        tokens = greedy(logits)
        elapsed = time.perf_counter_ns() - started
        self.context = context
        return tokens, elapsed

    def _run(self, feeds: dict, cache: dict) -> np.ndarray:
        given = {**feeds, **cache}
        if self.binding is None:
            outputs = dict(zip(self.output_names, self.session.run(None, given)))
            self.cache = {past: outputs[present] for past, present in self.presents.items()}
            self.cache.update({name: given[name] for name in self.fixed})
            return outputs[self.logits]
        import onnxruntime as ort

        binding = self.binding
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()
        for name, array in feeds.items():        # the prompt's feeds hold its empty cache too
            if name in self.fixed:               # placed on the device once, bound every step
                cache[name] = ort.OrtValue.ortvalue_from_numpy(array, self.device, 0)
            else:
                binding.bind_cpu_input(name, array)
        for name, value in cache.items():
            binding.bind_ortvalue_input(name, value)
        for name in self.output_names:
            binding.bind_output(name, "cpu" if name == self.logits else self.device)
        self.session.run_with_iobinding(binding)
        values = dict(zip(self.output_names, binding.get_outputs()))
        self.cache = {past: values[present] for past, present in self.presents.items()}
        self.cache.update({name: cache[name] for name in self.fixed})
        return values[self.logits].numpy()


def _dtype(type_text: str):
    from app.core.session.inputs import numpy_dtype
    return numpy_dtype(type_text)
