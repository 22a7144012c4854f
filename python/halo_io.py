"""Readers for halo's files, with numpy only; interchange with DGL and PyG.

One loader per kind of file that halo writes, so that a notebook can open any output without
halo's C source:

=========================  ======================================  =========================
loader                     reads                                   written by
=========================  ======================================  =========================
:func:`load_graph`         a graph directory (``meta.json`` +      ``halo gen``, ``halo
                           raw arrays)                             import``
:func:`load_partition`     a partition directory                   ``halo partition``
                           (``partition.json``, ``orig_id.i64``,
                           ``part-K/``)
:func:`load_trace`         an access trace (``FILE`` or            ``halo train --trace``,
                           ``FILE.r0`` .. ``FILE.r{P-1}``)         ``halo trace record``
:func:`load_metrics`       ``--metrics FILE.jsonl``                ``halo train``
:func:`load_timeline`      ``--timeline FILE.jsonl``               ``halo train``
=========================  ======================================  =========================

Large arrays are memory-mapped read-only (``numpy.memmap``), so opening a graph bigger than
memory costs nothing until its pages are touched. Every array's size is checked against the
counts of its ``meta.json`` (and the ``bytes`` recorded there) before it is mapped; a problem
raises :class:`HaloFormatError` (a ``ValueError``) whose message starts with the offending
file's path, like halo's own errors. Checksums are not verified (``halo verify`` does that).

Interchange (each needs numpy, plus torch and the library it names): :func:`to_dgl` and
:func:`to_pyg` turn a :class:`Graph` or a :class:`Part` into a ``dgl.DGLGraph`` or a
``torch_geometric.data.Data``; :func:`from_dgl`, :func:`from_pyg` and :func:`write_graph` write
a graph directory that ``halo verify`` accepts; :func:`dgl_partition_to_assign` turns the output
of DGL's ``partition_graph`` into a file for ``halo partition --assign`` (docs/python.md).

Formats: docs/graph.md, docs/partition.md, docs/cache.md ("Trace format"), docs/train.md
("Metrics"), docs/pipeline.md ("The timeline"). Python >= 3.9, numpy >= 1.17. The module
imports without numpy; a function that needs it then raises :class:`MissingDependency` (an
``ImportError``) with one line naming numpy and the function.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union


class MissingDependency(ImportError):
    """A package that the called function needs (numpy, torch, dgl, torch_geometric) cannot be
    imported; the message is one line naming it and the function."""


def _public_caller() -> str:
    """Name of the outermost halo_io function on the stack (the one the user called)."""
    f, name = sys._getframe(1), "halo_io"
    while f is not None:
        if f.f_globals.get("__name__") == __name__ and f.f_code.co_name != "<module>":
            name = f.f_code.co_name
        f = f.f_back
    return name


class _Missing:
    """Stands for a package that failed to import: any use raises MissingDependency."""

    def __init__(self, package: str, error: BaseException) -> None:
        self._package = package
        self._error = error

    def __getattr__(self, attr: str) -> Any:
        raise MissingDependency(
            f"halo_io.{_public_caller()} needs {self._package}, which {sys.executable} cannot "
            f"import ({self._error}); install it (pip install {self._package})") from None


try:
    import numpy as np
except ImportError as _e:  # only the functions that read or write arrays need numpy
    np = _Missing("numpy", _e)  # type: ignore[assignment]

__all__ = [
    "HaloFormatError",
    "MissingDependency",
    "to_dgl",
    "to_pyg",
    "write_graph",
    "from_dgl",
    "from_pyg",
    "dgl_partition_to_assign",
    "Graph",
    "Partition",
    "Part",
    "Trace",
    "TraceRank",
    "TraceBatch",
    "Metrics",
    "load_graph",
    "load_partition",
    "load_trace",
    "load_metrics",
    "epochs_table",
    "load_timeline",
    "SPLIT_NONE",
    "SPLIT_TRAIN",
    "SPLIT_VALID",
    "SPLIT_TEST",
    "TRACE_F_REMOTE",
    "TRACE_F_HALO",
    "TRACE_F_HIT",
]

PathLike = Union[str, "os.PathLike[str]"]

#: Values of ``split.u8``.
SPLIT_NONE, SPLIT_TRAIN, SPLIT_VALID, SPLIT_TEST = 0, 1, 2, 3

#: Flags of one input node in a trace batch (``runtime/cache/trace.h``).
TRACE_F_REMOTE = 1  # owned by another rank
TRACE_F_HALO = 2  # in the rank's halo set (cacheable)
TRACE_F_HIT = 4  # served by the cache when the trace was recorded

GRAPH_FORMAT = 1
PART_FORMAT = 1
TRACE_MAGIC = b"HALOTRC1"
TRACE_VERSION = 1
TRACE_KIND_HALO = 1
TRACE_KIND_BATCH = 2
TRACE_KIND_BLOCK = 3

_TRACE_HEAD = struct.Struct("<8sIIIIq")  # magic, version, ranks, feat_dim, reserved, nodes
_TRACE_REC = struct.Struct("<IIqqq")  # kind, rank, a, b, n


class HaloFormatError(ValueError):
    """A file that does not have the layout halo writes; the message starts with its path."""


# ---------------------------------------------------------------------------------------------
# helpers


def _read_json(path: str) -> Dict[str, Any]:
    """Parses a JSON file whose top level must be an object."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            v = json.load(f)
    except json.JSONDecodeError as e:
        raise HaloFormatError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(v, dict):
        raise HaloFormatError(f"{path}: expected a JSON object")
    return v


def _get_int(obj: Dict[str, Any], key: str, where: str, lo: int = 0,
             hi: Optional[int] = None) -> int:
    """obj[key] as an int in [lo, hi]; HaloFormatError naming `where` otherwise."""
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
        raise HaloFormatError(f"{where}: \"{key}\" is missing or not an integer")
    v = int(v)
    if v < lo or (hi is not None and v > hi):
        raise HaloFormatError(f"{where}: \"{key}\" is {v}, out of range")
    return v


def _features_flag(obj: Dict[str, Any], where: str) -> bool:
    """The optional boolean "features" of a meta.json (absent: the graph has features)."""
    if "features" not in obj:
        return True
    v = obj["features"]
    if not isinstance(v, bool):
        raise HaloFormatError(f"{where}: \"features\" must be true or false")
    return v


def _map_array(path: str, dtype: str, count: int, shape: Optional[Sequence[int]] = None,
               recorded: Optional[Dict[str, Any]] = None, meta_path: str = "meta.json",
               mmap: bool = True) -> np.ndarray:
    """Maps (or reads) a raw little-endian array of `count` items after checking its size.

    The file must hold exactly count * itemsize bytes; when `recorded` (the file's entry of
    meta.json "files") is given, its "bytes" must agree too. Errors name the file.
    """
    dt = np.dtype(dtype)
    want = count * dt.itemsize
    if recorded is not None:
        rb = recorded.get("bytes") if isinstance(recorded, dict) else None
        if isinstance(rb, bool) or not isinstance(rb, (int, float)):
            raise HaloFormatError(f"{path}: {os.path.basename(meta_path)} records no \"bytes\"")
        if int(rb) != want:
            raise HaloFormatError(
                f"{path}: {os.path.basename(meta_path)} records {int(rb)} bytes, "
                f"its counts need {want}")
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise HaloFormatError(f"{path}: missing") from None
    if size != want:
        raise HaloFormatError(f"{path}: size is {size} bytes, "
                              f"{os.path.basename(meta_path)} says {want}")
    shp = tuple(shape) if shape is not None else (count,)
    if count == 0:
        a = np.empty(shp, dtype=dt)  # numpy cannot map an empty file
    elif mmap:
        a = np.memmap(path, dtype=dt, mode="r", shape=shp)
    else:
        a = np.fromfile(path, dtype=dt, count=count).reshape(shp)
    return a


def _file_entry(files: Any, name: str, meta_path: str) -> Dict[str, Any]:
    """meta.json "files"[name], which must exist."""
    if not isinstance(files, dict) or not isinstance(files.get(name), dict):
        raise HaloFormatError(f"{meta_path}: no entry for {name} in \"files\"")
    return files[name]


# ---------------------------------------------------------------------------------------------
# graphs


@dataclass
class Graph:
    """A graph directory (docs/graph.md): an in-edge CSR and per-node arrays.

    Row v of the CSR lists the sources of v's in-edges: ``indices[indptr[v]:indptr[v + 1]]``.
    ``feat`` is ``(nodes, feat_dim)`` float32, or None for a topology-only graph
    (``meta["features"] is False``), whose ``feat_dim`` is the declared width. A typed graph
    keeps one file per featured node type (docs/hetero.md): ``feat`` is None and ``tfeat``
    maps each such type's name to its ``(nodes_t, w_t)`` rows (``padded_features()`` gives the
    ``(nodes, feat_dim)`` rows the trainer sees, zeros past each type's width).
    """

    dir: str
    meta: Dict[str, Any]
    name: str
    nodes: int
    edges: int
    feat_dim: int
    classes: int
    directed: bool
    ntypes: int
    topology_only: bool
    indptr: np.ndarray  # int64 [nodes + 1]
    indices: np.ndarray  # int32 [edges]
    feat: Optional[np.ndarray]  # float32 [nodes, feat_dim] or None
    label: np.ndarray  # int32 [nodes], -1 unlabelled
    split: np.ndarray  # uint8 [nodes], SPLIT_*
    ntype: Optional[np.ndarray] = None  # uint8 [nodes] when ntypes > 1
    etype: Optional[np.ndarray] = None  # uint8 [edges] relation per in-edge on a typed graph
    tfeat: Optional[Dict[str, np.ndarray]] = None  # typed: type name -> float32 [nodes_t, w_t]

    def padded_features(self) -> Optional[np.ndarray]:
        """(nodes, feat_dim) float32 rows: ``feat``, or a typed graph's per-type rows with
        zeros past each type's width and zero rows for featureless types."""
        if self.tfeat is None:
            return self.feat
        out = np.zeros((self.nodes, self.feat_dim), dtype=np.float32)
        start = 0
        for t in self.meta["node_types"]:
            n = int(t["nodes"])
            x = self.tfeat.get(t["name"])
            if x is not None:
                out[start:start + n, :x.shape[1]] = x
            start += n
        return out

    def in_degree(self) -> np.ndarray:
        """In-degree of every node (int64 [nodes])."""
        return np.diff(np.asarray(self.indptr))

    def neighbours(self, v: int) -> np.ndarray:
        """Sources of the in-edges of node v."""
        return self.indices[int(self.indptr[v]):int(self.indptr[v + 1])]

    def split_counts(self) -> Dict[str, int]:
        """Nodes per split value: {"none", "train", "valid", "test"} -> count."""
        c = np.bincount(np.asarray(self.split), minlength=4)
        return {"none": int(c[0]), "train": int(c[1]), "valid": int(c[2]), "test": int(c[3])}


def load_graph(dir: PathLike, mmap: bool = True) -> Graph:
    """Loads the graph directory `dir` (``meta.json`` beside the raw arrays).

    Each array's size is checked against the counts of meta.json and the bytes it records;
    a mismatch, a missing file or a malformed meta.json raises :class:`HaloFormatError`
    naming the file. With ``mmap=False`` the arrays are read into memory instead of mapped.
    """
    d = os.fspath(dir)
    mp = os.path.join(d, "meta.json")
    meta = _read_json(mp)
    fmt = _get_int(meta, "format", mp)
    if fmt != GRAPH_FORMAT:
        raise HaloFormatError(f"{mp}: format {fmt} is not {GRAPH_FORMAT}")
    nodes = _get_int(meta, "nodes", mp, 0, 2**31 - 1)
    edges = _get_int(meta, "edges", mp, 0)
    feat_dim = _get_int(meta, "feat_dim", mp, 0, 1000000)
    classes = _get_int(meta, "classes", mp, 0, 1000000)
    nt = meta.get("ntypes", 1)
    ntypes = int(nt) if isinstance(nt, (int, float)) and not isinstance(nt, bool) else 1
    directed = meta.get("directed", True) is not False
    has_feat = _features_flag(meta, mp)
    files = meta.get("files")

    def arr(name: str, dtype: str, count: int, shape: Optional[Sequence[int]] = None):
        return _map_array(os.path.join(d, name), dtype, count, shape,
                          _file_entry(files, name, mp), mp, mmap)

    indptr = arr("indptr.i64", "<i8", nodes + 1)
    indices = arr("indices.i32", "<i4", edges)
    feat = None
    tfeat = None
    if has_feat and "relations" in meta:  # typed: one file per featured node type
        tfeat = {}
        for t in meta.get("node_types", []):
            w, n = int(t["feat_dim"]), int(t["nodes"])
            if w > 0:
                tfeat[t["name"]] = arr(f"feat.{t['name']}.f32", "<f4", n * w, (n, w))
    elif has_feat:
        fp = os.path.join(d, "feat.f32")
        if not os.path.exists(fp):
            raise HaloFormatError(f"{fp}: missing, and meta.json does not say the graph is "
                                  "topology-only (\"features\": false)")
        feat = arr("feat.f32", "<f4", nodes * feat_dim, (nodes, feat_dim))
    label = arr("label.i32", "<i4", nodes)
    split = arr("split.u8", "u1", nodes)
    ntype = arr("ntype.u8", "u1", nodes) if ntypes > 1 else None
    etype = arr("etype.u8", "u1", edges) if "relations" in meta else None
    if nodes + 1 > 0 and (int(indptr[0]) != 0 or int(indptr[-1]) != edges):
        raise HaloFormatError(
            f"{os.path.join(d, 'indptr.i64')}: runs from {int(indptr[0])} to "
            f"{int(indptr[-1])}, meta.json says 0 to {edges} edges")
    name = meta.get("name")
    return Graph(dir=d, meta=meta, name=name if isinstance(name, str) else "",
                 nodes=nodes, edges=edges, feat_dim=feat_dim, classes=classes,
                 directed=directed, ntypes=ntypes, topology_only=not has_feat,
                 indptr=indptr, indices=indices, feat=feat, label=label, split=split,
                 ntype=ntype, etype=etype, tfeat=tfeat)


# ---------------------------------------------------------------------------------------------
# partitions


@dataclass
class Part:
    """One part (``PDIR/part-K/``) of a partition: the owned nodes [start, end) in new ids.

    Row i of the CSR is node ``start + i``; ``indices``, ``halo`` and ``train`` hold global
    (new) ids. ``feat`` is ``(nodes, feat_dim)`` float32 or None in a topology-only partition.
    A typed part has ``feat`` None and ``tfeat``: each featured type's name -> its
    ``(nodes_t, w_t)`` rows over the part's range of that type (``partition.json``
    ``type_ranges[k][t]``), read from ``feat.TYPE.f32``.
    """

    id: int
    dir: str
    meta: Dict[str, Any]
    start: int
    end: int
    nodes: int
    edges: int
    feat_dim: int
    topology_only: bool
    indptr: np.ndarray  # int64 [nodes + 1]
    indices: np.ndarray  # int32 [edges] global source ids
    feat: Optional[np.ndarray]  # float32 [nodes, feat_dim] or None
    label: np.ndarray  # int32 [nodes]
    split: np.ndarray  # uint8 [nodes]
    halo: np.ndarray  # int32 [num_halo] sorted global ids owned by other parts
    halo_deg: np.ndarray  # int32 [num_halo] in-degree in the whole graph
    train: np.ndarray  # int32 [num_train] training seeds (global ids)
    tfeat: Optional[Dict[str, np.ndarray]] = None  # typed: type name -> float32 [n_kt, w_t]

    @property
    def num_halo(self) -> int:
        """Halo nodes of this part."""
        return int(self.halo.shape[0])

    @property
    def num_train(self) -> int:
        """Training seeds of this part."""
        return int(self.train.shape[0])

    @property
    def ids(self) -> np.ndarray:
        """Global ids of the owned nodes, row order (int64 [nodes])."""
        return np.arange(self.start, self.end, dtype=np.int64)


class Partition:
    """A partition directory (docs/partition.md); parts are loaded on demand with :meth:`part`.

    Attributes: ``info`` (partition.json as a dict), ``parts``, ``nodes``, ``edges``,
    ``feat_dim``, ``classes``, ``topology_only``, ``ranges`` (int64 [parts + 1]: part k owns
    new ids ``[ranges[k], ranges[k + 1])``) and ``orig_id`` (int64 [nodes]: new id -> id in
    the input graph).
    """

    def __init__(self, pdir: str, info: Dict[str, Any], ranges: np.ndarray,
                 orig_id: np.ndarray, mmap: bool = True) -> None:
        self.dir = pdir
        self.info = info
        self.ranges = ranges
        self.orig_id = orig_id
        self._mmap = mmap
        g = info.get("graph") if isinstance(info.get("graph"), dict) else {}
        where = os.path.join(pdir, "partition.json")
        self.parts = int(ranges.shape[0] - 1)
        self.nodes = int(ranges[-1])
        self.edges = _get_int(g, "edges", where + " (graph)") if "edges" in g else -1
        self.feat_dim = _get_int(g, "feat_dim", where + " (graph)") if "feat_dim" in g else 0
        self.classes = _get_int(g, "classes", where + " (graph)") if "classes" in g else 0
        self.topology_only = not _features_flag(g, where)
        self.machines = int(info.get("machines", self.parts))
        self.trainers_per_machine = int(info.get("trainers_per_machine", 1))

    @property
    def start(self) -> np.ndarray:
        """Range starts, int64 [parts + 1] (the same array as ``ranges``)."""
        return self.ranges

    def owner(self, gid: Union[int, np.ndarray, Sequence[int]]) -> Union[int, np.ndarray]:
        """Part owning each global id (binary search over the range ends); -1 outside
        [0, nodes). A scalar gives an int, an array an int64 array of the same shape."""
        g = np.asarray(gid, dtype=np.int64)
        k = np.searchsorted(self.ranges[1:], g, side="right")
        k = np.asarray(np.where((g < 0) | (g >= self.nodes), -1, k), dtype=np.int64)
        return int(k) if k.ndim == 0 else k

    def part(self, k: int) -> Part:
        """Loads part k, checking every array against ``part-K/meta.json``."""
        if not 0 <= k < self.parts:
            raise IndexError(f"part {k} out of range [0, {self.parts})")
        d = os.path.join(self.dir, f"part-{k}")
        mp = os.path.join(d, "meta.json")
        meta = _read_json(mp)
        fmt = _get_int(meta, "format", mp)
        if fmt != PART_FORMAT:
            raise HaloFormatError(f"{mp}: format {fmt} is not {PART_FORMAT}")
        start = _get_int(meta, "start", mp)
        end = _get_int(meta, "end", mp)
        if start != int(self.ranges[k]) or end != int(self.ranges[k + 1]):
            raise HaloFormatError(f"{mp}: range [{start}, {end}) differs from partition.json "
                                  f"[{int(self.ranges[k])}, {int(self.ranges[k + 1])})")
        n = _get_int(meta, "nodes", mp)
        if n != end - start:
            raise HaloFormatError(f"{mp}: nodes {n} is not end - start = {end - start}")
        e = _get_int(meta, "edges", mp)
        fd = _get_int(meta, "feat_dim", mp, 0, 1000000)
        nh = _get_int(meta, "num_halo", mp)
        ntr = _get_int(meta, "num_train", mp)
        has_feat = _features_flag(meta, mp)
        files = meta.get("files")

        def arr(name: str, dtype: str, count: int, shape: Optional[Sequence[int]] = None):
            return _map_array(os.path.join(d, name), dtype, count, shape,
                              _file_entry(files, name, mp), mp, self._mmap)

        feat = None
        tfeat = None
        if has_feat and "nrels" in meta:  # typed: one file per featured node type
            tfeat = {}
            for t, nt in enumerate(self.info.get("node_types", [])):
                w = int(nt.get("feat_dim", fd))
                s0, s1 = self.info["type_ranges"][k][t]
                if w > 0:
                    tfeat[nt["name"]] = arr(f"feat.{nt['name']}.f32", "<f4", (s1 - s0) * w,
                                            (s1 - s0, w))
        elif has_feat:
            fp = os.path.join(d, "feat.f32")
            if not os.path.exists(fp):
                raise HaloFormatError(f"{fp}: missing, and {mp} does not say the partition is "
                                      "topology-only (\"features\": false)")
            feat = arr("feat.f32", "<f4", n * fd, (n, fd))
        return Part(id=k, dir=d, meta=meta, start=start, end=end, nodes=n, edges=e,
                    feat_dim=fd, topology_only=not has_feat,
                    indptr=arr("indptr.i64", "<i8", n + 1),
                    indices=arr("indices.i32", "<i4", e), feat=feat,
                    label=arr("label.i32", "<i4", n), split=arr("split.u8", "u1", n),
                    halo=arr("halo.i32", "<i4", nh), halo_deg=arr("halo_deg.i32", "<i4", nh),
                    train=arr("train.i32", "<i4", ntr), tfeat=tfeat)

    def __iter__(self):
        """Iterates over the parts (loading each)."""
        for k in range(self.parts):
            yield self.part(k)

    def __len__(self) -> int:
        return self.parts

    def __repr__(self) -> str:
        return (f"Partition({self.dir!r}, parts={self.parts}, nodes={self.nodes}, "
                f"method={self.info.get('method')!r})")


def load_partition(pdir: PathLike, mmap: bool = True) -> Partition:
    """Loads partition.json and orig_id.i64 of the partition directory `pdir`.

    The ranges must tile [0, nodes) in order; ``orig_id.i64`` must hold nodes int64 entries.
    Parts are loaded by :meth:`Partition.part`. Errors raise :class:`HaloFormatError`
    naming the file.
    """
    d = os.fspath(pdir)
    jp = os.path.join(d, "partition.json")
    info = _read_json(jp)
    fmt = _get_int(info, "format", jp)
    if fmt != PART_FORMAT:
        raise HaloFormatError(f"{jp}: format {fmt} is not {PART_FORMAT}")
    parts = _get_int(info, "parts", jp, 1)
    rg = info.get("ranges")
    if not isinstance(rg, list) or len(rg) != parts:
        raise HaloFormatError(f"{jp}: \"ranges\" must list {parts} [start, end] pairs")
    start = np.zeros(parts + 1, dtype=np.int64)
    for k, r in enumerate(rg):
        if (not isinstance(r, list) or len(r) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) for x in r)
                or r[0] != start[k] or r[1] < r[0]):
            raise HaloFormatError(f"{jp}: range {k} is {r!r}, not [{int(start[k])}, end >= "
                                  "start]")
        start[k + 1] = r[1]
    g = info.get("graph")
    nodes = int(start[-1])
    if isinstance(g, dict) and "nodes" in g and _get_int(g, "nodes", jp) != nodes:
        raise HaloFormatError(f"{jp}: ranges end at {nodes}, graph has {g['nodes']} nodes")
    orig = _map_array(os.path.join(d, "orig_id.i64"), "<i8", nodes, None, None, jp, mmap)
    return Partition(d, info, start, orig, mmap)


# ---------------------------------------------------------------------------------------------
# traces


@dataclass
class TraceBatch:
    """One BATCH record: the input nodes of one step of one rank and their flags."""

    epoch: int
    batch: int
    ids: np.ndarray  # int32 [n] input node ids (global)
    flags: np.ndarray  # uint8 [n], TRACE_F_* bits

    @property
    def remote(self) -> np.ndarray:
        """Boolean mask of the remote inputs (owned by another rank)."""
        return (self.flags & TRACE_F_REMOTE) != 0

    @property
    def halo(self) -> np.ndarray:
        """Boolean mask of the inputs in the rank's halo set."""
        return (self.flags & TRACE_F_HALO) != 0

    @property
    def hit(self) -> np.ndarray:
        """Boolean mask of the inputs served by the cache when recorded."""
        return (self.flags & TRACE_F_HIT) != 0


@dataclass
class TraceBlock:
    """One BLOCK record (``halo trace record --blocks``): one layer of a batch's sampled edges."""

    epoch: int
    batch: int
    layer: int  # 0 = input layer
    dst: np.ndarray  # int32 [num_dst] destination ids (global)
    count: np.ndarray  # int32 [num_dst] sampled in-neighbours of each destination
    src: np.ndarray  # int32 [edges] their ids, destination by destination


@dataclass
class TraceRank:
    """One rank's part of a trace: its halo set and its batches in step order."""

    rank: int
    halo_ids: Optional[np.ndarray] = None  # int32 [num_halo] sorted (None: no HALO record)
    halo_deg: Optional[np.ndarray] = None  # int32 [num_halo]
    halo_owner: Optional[np.ndarray] = None  # int32 [num_halo]
    vip: Optional[np.ndarray] = None  # float64 [num_halo] or None
    batches: List[TraceBatch] = field(default_factory=list)
    blocks: List[TraceBlock] = field(default_factory=list)  # with --blocks, in record order

    @property
    def num_halo(self) -> int:
        """Halo nodes (0 without a HALO record)."""
        return 0 if self.halo_ids is None else int(self.halo_ids.shape[0])

    @property
    def epochs(self) -> int:
        """Distinct epochs seen (largest epoch + 1)."""
        return max((b.epoch for b in self.batches), default=-1) + 1


@dataclass
class Trace:
    """An access trace (runtime/cache/trace.h): header fields and one :class:`TraceRank` per
    rank (``ranks_data[r]``, also ``trace[r]``)."""

    files: List[str]
    version: int
    ranks: int
    feat_dim: int
    nodes: int
    ranks_data: List[TraceRank]

    def __getitem__(self, r: int) -> TraceRank:
        return self.ranks_data[r]

    def __len__(self) -> int:
        return self.ranks

    @property
    def batches(self) -> int:
        """Batch records over every rank."""
        return sum(len(r.batches) for r in self.ranks_data)


def _pad8(n: int) -> int:
    return (n + 7) & ~7


def _trace_file(path: str, t: Optional[Trace], mmap: bool) -> Trace:
    """Parses one trace file into t (a new Trace when t is None), checking every record."""
    size = os.stat(path).st_size
    if size < _TRACE_HEAD.size:
        raise HaloFormatError(f"{path}: too short for a trace header ({size} bytes)")
    if mmap:
        buf = np.memmap(path, dtype=np.uint8, mode="r")
    else:
        buf = np.fromfile(path, dtype=np.uint8)
    mv = memoryview(buf)
    magic, version, ranks, feat_dim, _res, nodes = _TRACE_HEAD.unpack_from(mv, 0)
    if magic != TRACE_MAGIC:
        raise HaloFormatError(f"{path}: not a halo trace (bad magic)")
    if version != TRACE_VERSION:
        raise HaloFormatError(f"{path}: trace version {version}, this reader reads "
                              f"{TRACE_VERSION}")
    if ranks < 1 or ranks > 65536 or nodes < 0 or nodes > 2**31 - 1:
        raise HaloFormatError(f"{path}: bad header (ranks {ranks}, nodes {nodes})")
    if t is None:
        t = Trace(files=[], version=version, ranks=ranks, feat_dim=feat_dim, nodes=nodes,
                  ranks_data=[TraceRank(r) for r in range(ranks)])
    elif ranks != t.ranks or nodes != t.nodes:
        raise HaloFormatError(f"{path}: header differs from the other files of the trace")
    t.files.append(path)
    off, k = _TRACE_HEAD.size, 0
    while off < size:
        if size - off < _TRACE_REC.size:
            raise HaloFormatError(f"{path}: record {k} at byte {off} is truncated")
        kind, rank, a, b, n = _TRACE_REC.unpack_from(mv, off)
        if rank >= ranks or n < 0 or n > 2**31 - 1:
            raise HaloFormatError(f"{path}: record {k} at byte {off}: bad rank {rank} or size "
                                  f"{n}")
        if kind == TRACE_KIND_HALO:
            body = 8 * n + _pad8(4 * n) + (8 * n if a else 0)
        elif kind == TRACE_KIND_BATCH:
            body = _pad8(4 * n) + _pad8(n)
        elif kind == TRACE_KIND_BLOCK:
            if size - off - _TRACE_REC.size < 8:
                raise HaloFormatError(f"{path}: record {k} at byte {off} is truncated")
            layer, nd = struct.unpack_from("<ii", mv, off + _TRACE_REC.size)
            if layer < 0 or layer >= 64 or nd < 0:
                raise HaloFormatError(f"{path}: record {k}: bad block layer {layer} or {nd} "
                                      f"destinations")
            body = 8 + 2 * _pad8(4 * nd) + _pad8(4 * n)
        else:
            raise HaloFormatError(f"{path}: record {k} at byte {off}: unknown kind {kind}")
        if body > size - off - _TRACE_REC.size:
            raise HaloFormatError(f"{path}: record {k} at byte {off} is truncated")
        p = off + _TRACE_REC.size
        tr = t.ranks_data[rank]
        if kind == TRACE_KIND_BLOCK:
            q = p + 8
            dst = np.frombuffer(buf, "<i4", nd, q)
            count = np.frombuffer(buf, "<i4", nd, q + _pad8(4 * nd))
            src = np.frombuffer(buf, "<i4", n, q + 2 * _pad8(4 * nd))
            if int(count.sum(dtype=np.int64)) != n or bool((count < 0).any()):
                raise HaloFormatError(f"{path}: record {k}: counts do not add up to the block's "
                                      f"{n} edges")
            if bool(((dst < 0) | (dst >= nodes)).any()) or bool(((src < 0) | (src >= nodes)).any()):
                raise HaloFormatError(f"{path}: record {k}: a block id is out of range")
            tr.blocks.append(TraceBlock(epoch=int(a), batch=int(b), layer=int(layer), dst=dst,
                                        count=count, src=src))
        elif kind == TRACE_KIND_HALO:
            if tr.halo_ids is not None:
                raise HaloFormatError(f"{path}: record {k}: second halo set of rank {rank}")
            tr.halo_ids = np.frombuffer(buf, "<i4", n, p)
            tr.halo_deg = np.frombuffer(buf, "<i4", n, p + 4 * n)
            tr.halo_owner = np.frombuffer(buf, "<i4", n, p + 8 * n)
            tr.vip = np.frombuffer(buf, "<f8", n, p + 8 * n + _pad8(4 * n)) if a else None
            if n > 1 and not bool(np.all(tr.halo_ids[1:] > tr.halo_ids[:-1])):
                i = int(np.argmin(tr.halo_ids[1:] > tr.halo_ids[:-1])) + 1
                raise HaloFormatError(f"{path}: record {k}: halo ids of rank {rank} not sorted "
                                      f"at {i}")
        else:
            if a < 0 or a > 2**31 - 1 or b < 0:
                raise HaloFormatError(f"{path}: record {k}: bad epoch {a} / batch {b}")
            ids = np.frombuffer(buf, "<i4", n, p)
            flags = np.frombuffer(buf, "u1", n, p + _pad8(4 * n))
            if n > 0:
                bad = (flags > 7) | (ids < 0) | (ids >= nodes)
                if bool(bad.any()):
                    i = int(np.argmax(bad))
                    raise HaloFormatError(f"{path}: record {k}: input {i}: bad id {int(ids[i])} "
                                          f"or flags {int(flags[i])}")
            tr.batches.append(TraceBatch(epoch=int(a), batch=int(b), ids=ids, flags=flags))
        off = p + body
        k += 1
    return t


def load_trace(path: PathLike, mmap: bool = True) -> Trace:
    """Loads an access trace: FILE, or FILE.r0 .. FILE.r{P-1} when FILE does not exist
    (one file per rank of a distributed run; P is the ranks field of FILE.r0's header).

    Every record is checked as ``halo trace replay`` checks it (magic, version, sizes, kinds,
    sorted halo ids, ids in [0, nodes), flags); problems raise :class:`HaloFormatError`
    naming the file and the record. Arrays are views of the mapped file.
    """
    p = os.fspath(path)
    if os.path.exists(p):
        t = _trace_file(p, None, mmap)
    else:
        first = p + ".r0"
        if not os.path.exists(first):
            raise FileNotFoundError(f"{p}: no such trace (nor {first})")
        t = _trace_file(first, None, mmap)
        for f in range(1, t.ranks):
            fp = f"{p}.r{f}"
            if not os.path.exists(fp):
                raise HaloFormatError(f"{fp}: missing ({first} says {t.ranks} ranks)")
            _trace_file(fp, t, mmap)
    for r in t.ranks_data:
        if r.halo_ids is None and r.batches:
            raise HaloFormatError(f"{p}: rank {r.rank} has batches but no halo set")
    return t


# ---------------------------------------------------------------------------------------------
# JSON Lines: metrics and timeline


def _read_jsonl(path: str) -> List[Dict[str, Any]]:
    """Every non-blank line of a JSON Lines file as a dict; errors name FILE:LINE."""
    out: List[Dict[str, Any]] = []
    with open(path, "r", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                v = json.loads(line)
            except json.JSONDecodeError as e:
                raise HaloFormatError(f"{path}:{line_no}: not JSON ({e.msg})") from None
            if not isinstance(v, dict):
                raise HaloFormatError(f"{path}:{line_no}: expected a JSON object")
            out.append(v)
    return out


@dataclass
class Metrics:
    """A ``--metrics`` file split by record type (docs/train.md, "Metrics").

    ``epochs``: one dict per rank per epoch (``"type": "epoch"``); ``evals``: the evaluations;
    ``summaries``: the run summaries (one per run); ``other``: records of any other type.
    """

    path: str
    records: List[Dict[str, Any]]
    epochs: List[Dict[str, Any]]
    evals: List[Dict[str, Any]]
    summaries: List[Dict[str, Any]]
    other: List[Dict[str, Any]]

    @property
    def summary(self) -> Optional[Dict[str, Any]]:
        """The last summary record, or None."""
        return self.summaries[-1] if self.summaries else None

    def table(self, kind: str = "epoch") -> Dict[str, np.ndarray]:
        """:func:`epochs_table` of the records of one type ("epoch", "eval", "summary")."""
        recs = {"epoch": self.epochs, "eval": self.evals, "summary": self.summaries}[kind]
        return epochs_table(recs)


def load_metrics(path: PathLike) -> Metrics:
    """Reads a ``halo train --metrics`` JSON Lines file into a :class:`Metrics`.

    Every line must be a JSON object with a ``"type"``; a bad line raises
    :class:`HaloFormatError` naming FILE:LINE.
    """
    p = os.fspath(path)
    recs = _read_jsonl(p)
    m = Metrics(path=p, records=recs, epochs=[], evals=[], summaries=[], other=[])
    for i, r in enumerate(recs):
        kind = r.get("type")
        if not isinstance(kind, str):
            raise HaloFormatError(f"{p}: record {i + 1} has no \"type\"")
        {"epoch": m.epochs, "eval": m.evals, "summary": m.summaries}.get(kind, m.other).append(r)
    return m


def _column(values: List[Any], present: List[bool]) -> np.ndarray:
    """One column of epochs_table: bool, int64, float64 (NaN where absent), str or object."""
    vals = [v for v, ok in zip(values, present) if ok]
    missing = not all(present)
    if vals and all(isinstance(v, bool) for v in vals) and not missing:
        return np.array(vals, dtype=bool)
    if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        if all(isinstance(v, int) for v in vals) and not missing:
            return np.array(vals, dtype=np.int64)
        return np.array([float(v) if ok else np.nan for v, ok in zip(values, present)],
                        dtype=np.float64)
    if vals and all(isinstance(v, str) for v in vals) and not missing:
        return np.array(vals, dtype=str)
    out = np.empty(len(values), dtype=object)
    for i, (v, ok) in enumerate(zip(values, present)):
        out[i] = v if ok else None
    return out


def epochs_table(records: Iterable[Dict[str, Any]]) -> Dict[str, np.ndarray]:
    """Turns a list of records (dicts) into columns: field -> numpy array, one entry per record.

    Fields are in order of first appearance. Integers give int64, numbers float64 (NaN where a
    record lacks the field), booleans bool, strings str; anything else (lists, objects, mixed
    or partly missing non-numeric fields) an object array with None where absent.
    """
    recs = list(records)
    keys: List[str] = []
    seen = set()
    for r in recs:
        for k in r:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    return {k: _column([r.get(k) for r in recs], [k in r for r in recs]) for k in keys}


def load_timeline(path: PathLike) -> Dict[str, np.ndarray]:
    """Reads a ``--timeline`` JSON Lines file (docs/pipeline.md) into columns.

    Returns {"rank": int32, "epoch": int32, "batch": int64, "stage": str, "thread": int32,
    "start": float64, "end": float64}, one entry per interval, in file order. Every line needs
    rank, batch, stage, start and end (epoch and thread default to 0, as in ``halo
    timeline``); end must not precede start. Errors name FILE:LINE.
    """
    p = os.fspath(path)
    cols: Dict[str, List[Any]] = {k: [] for k in
                                  ("rank", "epoch", "batch", "stage", "thread", "start", "end")}
    with open(p, "r", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{p}:{line_no}"
            try:
                e = json.loads(line)
            except json.JSONDecodeError as ex:
                raise HaloFormatError(f"{where}: not JSON ({ex.msg})") from None
            if not isinstance(e, dict):
                raise HaloFormatError(f"{where}: expected a JSON object")
            for key in ("rank", "batch", "stage", "start", "end"):
                if key not in e:
                    raise HaloFormatError(f"{where}: no \"{key}\"")
            try:
                rank, epoch = int(e["rank"]), int(e.get("epoch", 0))
                batch, thread = int(e["batch"]), int(e.get("thread", 0))
                start, end = float(e["start"]), float(e["end"])
            except (TypeError, ValueError):
                raise HaloFormatError(f"{where}: rank, epoch, batch, thread, start and end "
                                      "must be numbers") from None
            if min(rank, epoch, batch, thread) < 0:
                raise HaloFormatError(f"{where}: rank, epoch, batch or thread out of range")
            if not isinstance(e["stage"], str) or not e["stage"]:
                raise HaloFormatError(f"{where}: stage must be a non-empty string")
            if end < start:
                raise HaloFormatError(f"{where}: end {end:g} is before start {start:g}")
            for k, v in (("rank", rank), ("epoch", epoch), ("batch", batch),
                         ("stage", e["stage"]), ("thread", thread), ("start", start),
                         ("end", end)):
                cols[k].append(v)
    if not cols["rank"]:
        raise HaloFormatError(f"{p}: no events (an empty timeline)")
    return {
        "rank": np.array(cols["rank"], dtype=np.int32),
        "epoch": np.array(cols["epoch"], dtype=np.int32),
        "batch": np.array(cols["batch"], dtype=np.int64),
        "stage": np.array(cols["stage"], dtype=str),
        "thread": np.array(cols["thread"], dtype=np.int32),
        "start": np.array(cols["start"], dtype=np.float64),
        "end": np.array(cols["end"], dtype=np.float64),
    }


# ---------------------------------------------------------------------------------------------
# interchange with DGL and PyG


def _import(package: str) -> Any:
    """Imports `package` or raises MissingDependency naming it and the calling function."""
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as e:
        return _Missing(package.split(".")[0], e)


def _edges_of(indptr: np.ndarray, indices: np.ndarray, row0: int = 0):
    """(src, dst) int64 arrays of an in-edge CSR: row v lists the sources u of edges u -> v,
    and rows are numbered from row0."""
    deg = np.diff(np.asarray(indptr, dtype=np.int64))
    dst = np.repeat(np.arange(row0, row0 + deg.shape[0], dtype=np.int64), deg)
    return np.asarray(indices, dtype=np.int64), dst


def _node_tensors(torch: Any, feat: Optional[np.ndarray], label: np.ndarray,
                  split: np.ndarray) -> Dict[str, Any]:
    """feat (float32), label (int64, -1 unlabelled) and the three masks as torch tensors."""
    out = {"label": torch.from_numpy(np.asarray(label, dtype=np.int64))}
    sp = np.asarray(split)
    for key, value in (("train_mask", SPLIT_TRAIN), ("val_mask", SPLIT_VALID),
                       ("test_mask", SPLIT_TEST)):
        out[key] = torch.from_numpy(sp == value)
    if feat is not None:
        out["feat"] = torch.from_numpy(np.array(feat, dtype=np.float32))
    return out


def _part_view(p: Part, nodes: int):
    """A part as a local graph: its owned nodes (local ids 0..n-1) then its halo nodes (n..),
    the in-edges of the owned nodes with sources renumbered, and per-node arrays padded for the
    halo rows (zero features, label -1, no split). Returns (src, dst, global ids, inner flags,
    feat, label, split)."""
    n, h = p.nodes, p.num_halo
    gids = np.concatenate([np.arange(p.start, p.end, dtype=np.int64),
                           np.asarray(p.halo, dtype=np.int64)])
    local = np.full(nodes, -1, dtype=np.int64)
    local[gids] = np.arange(n + h, dtype=np.int64)
    src, dst = _edges_of(p.indptr, p.indices)
    src = local[src]
    if (src < 0).any():
        raise HaloFormatError(f"{p.dir}: an in-edge comes from a node neither owned nor in "
                              "halo.i32")
    pad = lambda a, fill, dt: np.concatenate([np.asarray(a, dtype=dt),  # noqa: E731
                                              np.full((h,) + np.shape(a)[1:], fill, dtype=dt)])
    feat = None if p.feat is None else pad(p.feat, 0, np.float32)
    inner = np.arange(n + h) < n
    return src, dst, gids, inner, feat, pad(p.label, -1, np.int32), pad(p.split, 0, np.uint8)


def _total(p: Part, nodes: Optional[int]) -> int:
    """Node count of the whole graph: `nodes`, or the largest id a part refers to + 1."""
    if nodes is not None:
        return int(nodes)
    top = max(int(np.max(p.halo, initial=0)), int(np.max(p.indices, initial=0)))
    return max(p.end, top + 1)


def to_dgl(obj: Union[Graph, Part, Partition], nodes: Optional[int] = None) -> Any:
    """A ``dgl.DGLGraph`` of a :class:`Graph` or of one :class:`Part`.

    Edges run u -> v for each source u in row v of the in-edge CSR. ``ndata`` holds ``feat``
    (float32; absent on a topology-only graph), ``label`` (int64, -1 unlabelled) and
    ``train_mask``/``val_mask``/``test_mask`` (bool), the names of DGL's OGB examples; a typed
    graph adds ``ntype`` and ``edata["etype"]`` (its features padded to ``feat_dim``). A part
    becomes its owned nodes (local ids 0..n-1) followed by its halo nodes, with DistDGL's
    ``ndata["inner_node"]`` (1 for owned) and ``ndata["_ID"]`` (the partition's global id); halo
    rows get zero features, label -1 and no split. `nodes` (a part only) is the node count of the
    whole graph (``Partition.nodes``; default: the largest id seen + 1). A :class:`Partition`
    gives the list of its parts' graphs.
    """
    dgl, torch = _import("dgl"), _import("torch")
    if isinstance(obj, Partition):
        return [to_dgl(p, obj.nodes) for p in obj]
    if isinstance(obj, Part):
        src, dst, gids, inner, feat, label, split = _part_view(obj, _total(obj, nodes))
        g = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=gids.shape[0])
        g.ndata.update(_node_tensors(torch, feat, label, split))
        g.ndata["inner_node"] = torch.from_numpy(inner.astype(np.uint8))
        g.ndata["_ID"] = torch.from_numpy(gids)
        return g
    src, dst = _edges_of(obj.indptr, obj.indices)
    g = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=obj.nodes)
    g.ndata.update(_node_tensors(torch, obj.padded_features(), obj.label, obj.split))
    if obj.ntype is not None:
        g.ndata["ntype"] = torch.from_numpy(np.asarray(obj.ntype, dtype=np.int64))
    if obj.etype is not None:
        g.edata["etype"] = torch.from_numpy(np.asarray(obj.etype, dtype=np.int64))
    return g


def to_pyg(obj: Union[Graph, Part, Partition], nodes: Optional[int] = None) -> Any:
    """A ``torch_geometric.data.Data`` of a :class:`Graph` or of one :class:`Part`.

    ``edge_index`` is (2, E) int64, row 0 the sources and row 1 the targets (PyG's
    source-to-target flow), ``x`` the features (None on a topology-only graph), ``y`` the labels
    (int64, -1 unlabelled) and ``train_mask``/``val_mask``/``test_mask`` bool. A typed graph adds
    ``node_type`` and ``edge_type``. A part is laid out as in :func:`to_dgl`, with
    ``n_id`` (global ids) and ``inner_node`` (bool) instead of DGL's names; a
    :class:`Partition` gives the list of its parts' ``Data``.
    """
    torch, pyg_data = _import("torch"), _import("torch_geometric.data")
    if isinstance(obj, Partition):
        return [to_pyg(p, obj.nodes) for p in obj]
    if isinstance(obj, Part):
        src, dst, gids, inner, feat, label, split = _part_view(obj, _total(obj, nodes))
        t = _node_tensors(torch, feat, label, split)
        extra = {"n_id": torch.from_numpy(gids), "inner_node": torch.from_numpy(inner)}
    else:
        src, dst = _edges_of(obj.indptr, obj.indices)
        t = _node_tensors(torch, obj.padded_features(), obj.label, obj.split)
        extra = {}
        if obj.ntype is not None:
            extra["node_type"] = torch.from_numpy(np.asarray(obj.ntype, dtype=np.int64))
        if obj.etype is not None:
            extra["edge_type"] = torch.from_numpy(np.asarray(obj.etype, dtype=np.int64))
        gids = np.arange(obj.nodes)
    return pyg_data.Data(x=t.get("feat"), edge_index=torch.from_numpy(np.stack([src, dst])),
                         y=t["label"], train_mask=t["train_mask"], val_mask=t["val_mask"],
                         test_mask=t["test_mask"], num_nodes=int(gids.shape[0]), **extra)


def _as_numpy(x: Any, what: str) -> np.ndarray:
    """A numpy array of a tensor (torch, on any device) or array-like."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    a = np.asarray(x)
    if a.dtype == object:
        raise HaloFormatError(f"{what}: not a numeric array")
    return a


def _labels(label: Any, nodes: int) -> np.ndarray:
    """int32 labels: (N,) or (N, 1), integers or floats; NaN and -1 are unlabelled (-1)."""
    a = _as_numpy(label, "label")
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.shape != (nodes,):
        raise HaloFormatError(f"label: shape {a.shape}, expected ({nodes},) or ({nodes}, 1)")
    if a.dtype.kind == "f":
        bad = ~np.isnan(a) & ((a != np.floor(a)) | (a < -1) | (a >= 1000000))
        a = np.where(np.isnan(a), -1, a)
    else:
        bad = (a < -1) | (a >= 1000000)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise HaloFormatError(f"label: entry {i} is {a[i]}, not a class in [0, 10^6) or "
                              "-1/NaN (unlabelled)")
    return a.astype(np.int32)


def _split_of(masks: Sequence[Any], nodes: int) -> np.ndarray:
    """split.u8 from the train, valid and test masks (each None, a bool or 0/1 (N,) mask, or an
    id list)."""
    split = np.zeros(nodes, dtype=np.uint8)
    for value, m in zip((SPLIT_TRAIN, SPLIT_VALID, SPLIT_TEST), masks):
        if m is None:
            continue
        a = _as_numpy(m, "mask")
        if a.dtype.kind in "ui" and a.shape == (nodes,) and nodes > 2 and a.size and \
                a.min() >= 0 and a.max() <= 1:
            a = a.astype(bool)  # a 0/1 mask (uint8 in some DGL datasets), not an id list
        idx = np.flatnonzero(a) if a.dtype == bool else a.astype(np.int64)
        if a.dtype == bool and a.shape != (nodes,):
            raise HaloFormatError(f"mask: shape {a.shape}, expected ({nodes},)")
        if idx.size and (idx.min() < 0 or idx.max() >= nodes):
            raise HaloFormatError(f"mask: node id out of range [0, {nodes})")
        if (split[idx] != SPLIT_NONE).any():
            raise HaloFormatError(f"mask: node {int(idx[split[idx] != 0][0])} is in two splits")
        split[idx] = value
    return split


def write_graph(dir: PathLike, src: Any, dst: Any, nodes: int, feat: Any = None,
                label: Any = None, masks: Sequence[Any] = (None, None, None),
                name: Optional[str] = None, classes: Optional[int] = None,
                source: Optional[Dict[str, Any]] = None) -> Graph:
    """Writes a graph directory (docs/graph.md) of the edges src[i] -> dst[i] over `nodes`
    nodes, as halo's own writer does: the in-edge CSR (row v the sources of v's in-edges in
    ascending order, edges kept as given, duplicates included), ``feat.f32`` (``feat``: (N, F)
    floats; None gives ``feat_dim`` 0), ``label.i32`` (``label``: (N,) or (N, 1), NaN or -1
    unlabelled; None: all unlabelled), ``split.u8`` (``masks``: train, valid and test masks or
    id lists) and ``meta.json`` with each file's size and CRC-32. ``directed`` is false when
    every edge has its reverse. Written into a temporary sibling and renamed, so a failure
    leaves nothing; an existing `dir` is refused. Returns the graph loaded back.
    """
    d = os.fspath(dir)
    if os.path.exists(d):
        raise FileExistsError(f"{d}: exists; halo_io writes a new graph directory")
    s = _as_numpy(src, "src").astype(np.int64).ravel()
    t = _as_numpy(dst, "dst").astype(np.int64).ravel()
    if s.shape != t.shape:
        raise HaloFormatError(f"edges: {s.shape[0]} sources but {t.shape[0]} destinations")
    if not 0 < nodes < 2**31:
        raise HaloFormatError(f"nodes: {nodes}, expected 1 .. 2^31-1")
    if s.size and (min(s.min(), t.min()) < 0 or max(s.max(), t.max()) >= nodes):
        raise HaloFormatError(f"edges: a node id outside [0, {nodes})")
    order = np.lexsort((s, t))  # by destination, then source
    indices = s[order].astype(np.int32)
    indptr = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(t, minlength=nodes), out=indptr[1:])
    fw = np.unique(s * nodes + t)
    directed = not (fw.shape[0] == s.shape[0] and
                    np.array_equal(fw, np.unique(t * nodes + s)))
    x = np.zeros((nodes, 0), dtype=np.float32) if feat is None else _as_numpy(feat, "feat")
    if x.ndim != 2 or x.shape[0] != nodes or x.dtype.kind not in "fiub":
        raise HaloFormatError(f"feat: shape {x.shape} of {x.dtype}, expected ({nodes}, F) "
                              "numbers")
    x = np.ascontiguousarray(x, dtype=np.float32)
    if not np.isfinite(x).all():
        raise HaloFormatError("feat: a value is not finite")
    lab = np.full(nodes, -1, dtype=np.int32) if label is None else _labels(label, nodes)
    arrays = {"indptr.i64": indptr.astype("<i8"), "indices.i32": indices.astype("<i4"),
              "feat.f32": x.astype("<f4"), "label.i32": lab.astype("<i4"),
              "split.u8": _split_of(masks, nodes)}
    ncls = int(lab.max()) + 1 if classes is None else int(classes)
    if ncls <= int(lab.max()):
        raise HaloFormatError(f"classes: {ncls}, but a label is {int(lab.max())}")
    parent = os.path.dirname(os.path.abspath(d))
    tmp = tempfile.mkdtemp(prefix=os.path.basename(d) + ".tmp-", dir=parent)
    try:
        files = {}
        for fname, a in arrays.items():
            data = a.tobytes()
            with open(os.path.join(tmp, fname), "wb") as f:
                f.write(data)
            files[fname] = {"bytes": len(data), "crc32": "%08x" % (zlib.crc32(data) & 0xFFFFFFFF)}
        src_info = dict(source or {"importer": "halo_io.write_graph"})
        src_info.update({"directed": directed, "input_edges": int(s.shape[0])})
        meta = {"format": GRAPH_FORMAT, "name": name or os.path.basename(os.path.abspath(d)),
                "nodes": nodes, "edges": int(s.shape[0]), "feat_dim": int(x.shape[1]),
                "classes": max(ncls, 0), "directed": directed, "ntypes": 1, "files": files,
                "source": src_info}
        with open(os.path.join(tmp, "meta.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
        os.rename(tmp, d)
    except BaseException:
        for fname in os.listdir(tmp):
            os.unlink(os.path.join(tmp, fname))
        os.rmdir(tmp)
        raise
    return load_graph(d)


def from_dgl(g: Any, dir: PathLike, feat: str = "feat", label: str = "label",
             masks: Sequence[str] = ("train_mask", "val_mask", "test_mask"),
             name: Optional[str] = None) -> Graph:
    """Writes the homogeneous ``dgl.DGLGraph`` g as a graph directory (:func:`write_graph`):
    its edges, and the ``ndata`` fields named by feat, label and masks when present (labels
    may be float with NaN for unlabelled, as ogbn-papers100M's). Node ids are kept, so an
    assignment from DGL (:func:`dgl_partition_to_assign`) applies to the directory as is."""
    if len(getattr(g, "ntypes", ["_N"])) != 1 or len(getattr(g, "canonical_etypes", [0])) != 1:
        raise HaloFormatError("from_dgl: a heterogeneous DGLGraph; convert it with "
                              "dgl.to_homogeneous first")
    u, v = g.edges()
    nd = g.ndata
    get = lambda k: nd[k] if k in nd else None  # noqa: E731
    return write_graph(dir, u, v, int(g.num_nodes()), feat=get(feat), label=get(label),
                       masks=[get(m) for m in masks], name=name,
                       source={"importer": "halo_io.from_dgl"})


def from_pyg(data: Any, dir: PathLike, name: Optional[str] = None) -> Graph:
    """Writes a ``torch_geometric.data.Data`` as a graph directory (:func:`write_graph`):
    ``edge_index`` (row 0 sources), ``x``, ``y`` and ``train_mask``/``val_mask``/``test_mask``
    when present."""
    ei = _as_numpy(data.edge_index, "edge_index")
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise HaloFormatError(f"edge_index: shape {ei.shape}, expected (2, E)")
    get = lambda k: getattr(data, k, None)  # noqa: E731
    return write_graph(dir, ei[0], ei[1], int(data.num_nodes), feat=get("x"), label=get("y"),
                       masks=[get("train_mask"), get("val_mask"), get("test_mask")], name=name,
                       source={"importer": "halo_io.from_pyg"})


def _load_ids(x: Any, what: str) -> np.ndarray:
    """An id array from an array, a tensor, a dict with one entry ({"_N": ...}, as DGL returns
    for a homogeneous graph), or a path to a .npy or (with torch) a .pt file."""
    if isinstance(x, (str, os.PathLike)):
        p = os.fspath(x)
        x = np.load(p) if p.endswith(".npy") else _import("torch").load(p)
    if isinstance(x, dict):
        if len(x) != 1:
            raise HaloFormatError(f"{what}: {len(x)} node types; a homogeneous graph has one")
        x = next(iter(x.values()))
    return _as_numpy(x, what).astype(np.int64).ravel()


def dgl_partition_to_assign(json_path: PathLike, out: PathLike,
                            orig_nids: Any = None) -> np.ndarray:
    """Turns DGL's ``partition_graph`` output into a ``halo partition --assign`` file.

    json_path is the partition's ``GRAPH.json``. Its ``node_map`` is either a file holding the
    part of each input node (old DGL, no reshuffle) or, per node type, ``[start, end)`` ranges
    of the reshuffled ids each part owns; then `orig_nids` maps a reshuffled id to the input
    node id (the first value ``partition_graph(..., return_mapping=True)`` returns, as an
    array, a tensor, a ``{"_N": ...}`` dict or a .npy/.pt path). Writes ``out`` as a 1-D int32
    .npy in input-node order (so it applies to ``from_dgl``'s directory of the same graph) and
    returns it. Errors raise :class:`HaloFormatError` naming json_path.
    """
    jp = os.fspath(json_path)
    meta = _read_json(jp)
    nodes = _get_int(meta, "num_nodes", jp, 1)
    parts = _get_int(meta, "num_parts", jp, 1)
    nm = meta.get("node_map")
    if isinstance(nm, str):  # a per-node part array beside the JSON
        assign = _load_ids(nm if os.path.isabs(nm) else os.path.join(os.path.dirname(jp), nm),
                           jp + " node_map")
    elif isinstance(nm, dict):
        if len(nm) != 1:
            raise HaloFormatError(f"{jp}: node_map has {len(nm)} node types; a homogeneous "
                                  "graph has one")
        ranges = next(iter(nm.values()))
        if (not isinstance(ranges, list) or len(ranges) != parts
                or any(not isinstance(r, list) or len(r) != 2 for r in ranges)):
            raise HaloFormatError(f"{jp}: node_map must list {parts} [start, end] ranges")
        at = 0
        for k, (a, b) in enumerate(ranges):
            if a != at or b < a:
                raise HaloFormatError(f"{jp}: node_map range {k} is [{a}, {b}), expected to "
                                      f"start at {at}")
            at = b
        if at != nodes:
            raise HaloFormatError(f"{jp}: node_map ranges end at {at}, num_nodes is {nodes}")
        if orig_nids is None:
            raise HaloFormatError(f"{jp}: node ids were reshuffled; pass orig_nids (the first "
                                  "value of partition_graph(..., return_mapping=True))")
        orig = _load_ids(orig_nids, "orig_nids")
        if orig.shape[0] != nodes or not np.array_equal(np.sort(orig), np.arange(nodes)):
            raise HaloFormatError(f"orig_nids: not a permutation of the {nodes} node ids of {jp}")
        bounds = np.array([r[1] for r in ranges], dtype=np.int64)
        assign = np.empty(nodes, dtype=np.int64)
        assign[orig] = np.searchsorted(bounds, np.arange(nodes), side="right")
    else:
        raise HaloFormatError(f"{jp}: no node_map")
    if assign.shape[0] != nodes or assign.min() < 0 or assign.max() >= parts:
        raise HaloFormatError(f"{jp}: node_map gives {assign.shape[0]} entries in "
                              f"[{assign.min()}, {assign.max()}], expected {nodes} in [0, {parts})")
    assign = assign.astype(np.int32)
    with open(os.fspath(out), "wb") as f:
        np.save(f, assign)
    return assign
