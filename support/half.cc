// The conversions are inline in half.h (straight-line, so loops vectorize).
#include "support/half.h"
