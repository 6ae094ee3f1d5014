// Everything a Janus user needs: arrays, the engine and its blockers, and the operators.
#pragma once

#include "janus/base/error.h"
#include "janus/core/allocator.h"
#include "janus/core/device.h"
#include "janus/core/dtype.h"
#include "janus/core/ndarray.h"
#include "janus/core/shape.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/autograd/autograd.h"
