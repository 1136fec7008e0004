"""Just enough of the ONNX protobuf format, in plain Python, for bench/torch_compare.py
on a GPU machine that has PyTorch but maybe not the `onnx` package (and no network):
read a model's initializers as numpy arrays, and write a small model (nodes with int /
ints attributes, raw-data initializers, static float inputs and outputs).
Checked against the `onnx` package by bench/test_onnx_lite.py.
"""
import struct

import numpy as np

_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
           10: np.float16, 11: np.float64}
_CODES = {np.dtype(v): k for k, v in _DTYPES.items()}


def _varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _fields(buf):
    """Yields (field number, wire type, value) of one message; length-delimited values as bytes."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, wt, v


def _packed_varints(v):
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x - (1 << 64) if x >= 1 << 63 else x)
    return out


def _tensor(buf):
    dims, dtype, name, raw, floats, int64s, int32s = [], 1, "", None, [], [], []
    for num, wt, v in _fields(buf):
        if num == 1:
            dims += _packed_varints(v) if wt == 2 else [v - (1 << 64) if v >= 1 << 63 else v]
        elif num == 2:
            dtype = v
        elif num == 8:
            name = v.decode()
        elif num == 9:
            raw = v
        elif num == 4:
            floats += list(struct.unpack(f"<{len(v) // 4}f", v)) if wt == 2 else [struct.unpack("<f", v)[0]]
        elif num == 7:
            int64s += _packed_varints(v) if wt == 2 else [v]
        elif num == 5:
            int32s += _packed_varints(v) if wt == 2 else [v]
    np_type = _DTYPES[dtype]
    if raw is not None:
        arr = np.frombuffer(raw, dtype=np_type).copy()
    elif dtype == 1:
        arr = np.array(floats, np.float32)
    elif dtype == 7:
        arr = np.array(int64s, np.int64)
    else:
        arr = np.array(int32s).astype(np_type)
    return name, arr.reshape(dims)


def load_initializers(path):
    """{name: numpy array} of the main graph's initializers (no external data)."""
    with open(path, "rb") as f:
        model = f.read()
    out = {}
    for num, _, v in _fields(model):
        if num == 7:  # ModelProto.graph
            for gnum, _, gv in _fields(v):
                if gnum == 5:  # GraphProto.initializer
                    name, arr = _tensor(gv)
                    out[name] = arr
    return out


def _key(num, wt):
    return _uvarint((num << 3) | wt)


def _uvarint(x):
    if x < 0:
        x += 1 << 64
    out = bytearray()
    while True:
        b = x & 0x7F
        x >>= 7
        if x:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _len(num, payload):
    return _key(num, 2) + _uvarint(len(payload)) + payload


def _str(num, s):
    return _len(num, s.encode())


def _int(num, v):
    return _key(num, 0) + _uvarint(v)


def tensor(name, arr):
    arr = np.ascontiguousarray(arr)
    out = b"".join(_int(1, d) for d in arr.shape) + _int(2, _CODES[arr.dtype]) + _str(8, name)
    return out + _len(9, arr.tobytes())


def node(op_type, inputs, outputs, name, **attrs):
    out = b"".join(_str(1, s) for s in inputs) + b"".join(_str(2, s) for s in outputs)
    out += _str(3, name) + _str(4, op_type)
    for k, v in attrs.items():
        if isinstance(v, (list, tuple)):
            a = _str(1, k) + b"".join(_int(8, x) for x in v) + _int(20, 7)
        else:
            a = _str(1, k) + _int(3, int(v)) + _int(20, 2)
        out += _len(5, a)
    return out


def value_info(name, dims):
    shape = b"".join(_len(1, _int(1, d)) for d in dims)
    tensor_type = _int(1, 1) + _len(2, shape)
    return _str(1, name) + _len(2, _len(1, tensor_type))


def model(nodes, initializers, inputs, outputs, opset=17):
    """nodes: node() bytes; initializers: {name: array}; inputs/outputs: [(name, dims)] float."""
    graph = b"".join(_len(1, n) for n in nodes) + _str(2, "g")
    graph += b"".join(_len(5, tensor(k, v)) for k, v in initializers.items())
    graph += b"".join(_len(11, value_info(n, d)) for n, d in inputs)
    graph += b"".join(_len(12, value_info(n, d)) for n, d in outputs)
    opset_id = _str(1, "") + _int(2, opset)
    return _int(1, 8) + _len(8, opset_id) + _len(7, graph)
