// The built-in operators: each is declared once, in the header of its family under
// dispatch/ops/ (included here), defined (schema and dispatching function) in that family's .cpp,
// and implemented by kernels in backends/ or by composites. docs/ops.md lists them with their
// schemas and backends.
#pragma once

#include "anatomy/dispatch/ops/binary.h"
#include "anatomy/dispatch/ops/channel_norm.h"
#include "anatomy/dispatch/ops/convolution.h"
#include "anatomy/dispatch/ops/copy.h"
#include "anatomy/dispatch/ops/factories.h"
#include "anatomy/dispatch/ops/foreach.h"
#include "anatomy/dispatch/ops/fused_optim.h"
#include "anatomy/dispatch/ops/indexing.h"
#include "anatomy/dispatch/ops/linalg.h"
#include "anatomy/dispatch/ops/loss.h"
#include "anatomy/dispatch/ops/nn.h"
#include "anatomy/dispatch/ops/pooling.h"
#include "anatomy/dispatch/ops/reduce.h"
#include "anatomy/dispatch/ops/unary.h"
#include "anatomy/dispatch/ops/views.h"
