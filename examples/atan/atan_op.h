/* The `Atan` custom op of Kiln's end-to-end sample: y = atan(x + offset), where `offset` is the op's option
 * (0 when the model does not set it). Written in C99 against Kiln's opaque API. */
#ifndef KILN_EXAMPLES_ATAN_OP_H_
#define KILN_EXAMPLES_ATAN_OP_H_

#include "kiln/operator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the operator, created on first use. It lives for the rest of the process. */
KilnOperator* AtanOperator(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_EXAMPLES_ATAN_OP_H_ */
