// RuntimeValue lives in graph/ (onnx_io reads and writes it too).
#pragma once

#include "graph/runtime_value.h"
