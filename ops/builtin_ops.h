// The table of builtin ops.
//
// Every builtin is a KilnOperator written against the public opaque API (kiln/c_api_opaque.h), exactly as a
// user's custom op would be: builtins get no private access to the interpreter (except IF, WHILE, CALL_ONCE and
// the resource-variable ops, which reach other subgraphs through runtime/subgraph_hook.h). Options arrive parsed,
// as the structs of kiln/builtin_op_data.h, through KilnOpaqueNodeGetBuiltinData.
#ifndef KILN_OPS_BUILTIN_OPS_H_
#define KILN_OPS_BUILTIN_OPS_H_

#include <vector>

#include "kiln/operator.h"

namespace kiln::ops {

struct BuiltinOp {
  int builtin_code;  // KilnBuiltinOperator
  int min_version;   // the versions of the op this operator serves, inclusive
  int max_version;
  const KilnOperator* op;
  // >= 0: output 0 takes the type of this input, whatever the model declares. LiteRT's kernels for these ops
  // set output->type in Prepare, so a model may declare another type (lr_add_int8's first ADD writes a tensor
  // declared float32 that LiteRT runs as int8). Builtins see only the opaque API and cannot retype a tensor,
  // so the interpreter does it for them, just before their Prepare. -1: the declared type stands.
  int output_type_from_input = -1;
};

// Every builtin op Kiln has. Created on first use; valid for the process lifetime.
const std::vector<BuiltinOp>& BuiltinOps();

}  // namespace kiln::ops

#endif  // KILN_OPS_BUILTIN_OPS_H_
