"""The samplers a loader may name: the C++ sampler table and the programs that
bulkgnn.define_sampler registered, by name and alias."""

import os

from . import _bulkgnn

SAMPLERS = {}


class SamplerProgram:
    """A sampler written with bulkgnn.define_sampler (or read by load_sampler_program),
    registered under its name: pass it (or the name) as sampler= to NeighborLoader or
    LinkNeighborLoader, or save it for `bulkgnn train --sampler-program FILE`."""

    def __init__(self, text, entry):
        self.json = text
        self.name = entry["name"]
        self.layer = entry["layer"]
        self.fanout = entry["fanout"]

    def save(self, path):
        """Writes the program's JSON to `path`, through a temporary file beside it that is
        renamed into place (a failed write leaves no file)."""
        temporary = f"{os.fspath(path)}.{os.getpid()}.tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as out:
                out.write(self.json)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.remove(temporary)
            raise

    def __repr__(self):
        return (f"<bulkgnn.SamplerProgram {self.name!r}: {self.fanout} fanouts, "
                f"{self.layer} layers>")


def refresh():
    """Reads the registered samplers again (after define_sampler added one)."""
    SAMPLERS.clear()
    SAMPLERS.update({name: entry for entry in _bulkgnn.samplers()
                     for name in [entry["name"], *entry["aliases"]]})


def sampler_name(sampler, caller):
    """The registered name a loader's sampler= argument stands for: a name (or alias)
    of bulkgnn.samplers(), or a bulkgnn.SamplerProgram."""
    name = sampler.name if isinstance(sampler, SamplerProgram) else sampler
    if not isinstance(name, str) or name not in SAMPLERS:
        raise ValueError(f"{caller}: sampler must be one of {', '.join(SAMPLERS)} or a "
                         f"bulkgnn.define_sampler program; got {sampler!r}")
    return name


refresh()
