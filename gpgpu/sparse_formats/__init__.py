"""The storage formats of :class:`gpgpu.sparse.SparseStream`, one module each, and their
registry ``FORMATS`` (the name ``from_scipy(A, format=...)`` takes -> the format's class).

=============  ==========================  ==================================================
format         class                       storage
=============  ==========================  ==================================================
"corrigan"     ``corrigan.Corrigan``       paper 003, Figs. 4-7: values and columns row after
                                           row, one program per non-zero count
"ellpack"      ``ellpack.Ellpack``         paper 002 section 3.2: m x K, one fragment a row
"tell"         ``tell.Tell``               paper 002 section 3.2, Table 3's DHTELL2: K x m
"packed"       ``packed.Packed``           beyond the papers: segments, two entries a texel
"split"        ``split.Split``             beyond the papers: segments, one entry a texel
=============  ==========================  ==================================================

What every format shares lives in :mod:`.common` (the base class ``Format``, whose docstring is
the interface ``SparseStream`` calls, and the host arithmetic of the layouts), the dense part
(002's "dense rows extracted") in :mod:`.dense`, and what the two segmented formats share in
:mod:`.segmented`. Nothing here imports :mod:`gpgpu.sparse`: a format receives the
``SparseStream`` it serves as an argument.

To add a format: one new module here with a subclass of ``common.Format`` (its docstring cites
its paper and says what it stores; it implements ``upload``, ``product``, ``fetches`` and
``to_scipy``, and ``auto_dense``, ``announce`` or ``scatter_add`` where it differs from the
defaults), and one line in ``FORMATS`` below. ``gpgpu.sparse`` is not touched:
``SparseStream.from_scipy`` accepts every name of ``FORMATS`` and shows the format's layout
attributes as its own.
"""
from .corrigan import Corrigan
from .ellpack import Ellpack
from .packed import Packed
from .split import Split
from .tell import Tell

#: format name -> its class, in the order ``from_scipy``'s messages list them
FORMATS = {
    "corrigan": Corrigan,
    "ellpack": Ellpack,
    "tell": Tell,
    "packed": Packed,
    "split": Split,
}

__all__ = ["FORMATS", "Corrigan", "Ellpack", "Tell", "Packed", "Split"]
