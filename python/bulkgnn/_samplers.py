"""The samplers a loader may name: the C++ sampler table and the programs that
bulkgnn.define_sampler registered, by name and alias."""

from . import _bulkgnn

SAMPLERS = {}


def refresh():
    """Reads the registered samplers again (after define_sampler added one)."""
    SAMPLERS.clear()
    SAMPLERS.update({name: entry for entry in _bulkgnn.samplers()
                     for name in [entry["name"], *entry["aliases"]]})


def sampler_name(sampler, caller):
    """The registered name a loader's sampler= argument stands for: a name (or alias)
    of bulkgnn.samplers(), or a bulkgnn.SamplerProgram."""
    name = sampler if isinstance(sampler, str) else getattr(sampler, "sampler_name", None)
    if name not in SAMPLERS:
        raise ValueError(f"{caller}: sampler must be one of {', '.join(SAMPLERS)} or a "
                         f"bulkgnn.define_sampler program; got {sampler!r}")
    return name


refresh()
