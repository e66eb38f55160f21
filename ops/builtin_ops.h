// The table of builtin ops.
//
// Every builtin is a KilnOperator written against the public opaque API (kiln/c_api_opaque.h), exactly as a
// user's custom op would be: builtins get no private access to the interpreter. Options arrive parsed, as the
// structs of kiln/builtin_op_data.h, through KilnOpaqueNodeGetBuiltinData.
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
};

// Every builtin op Kiln has. Created on first use; valid for the process lifetime.
const std::vector<BuiltinOp>& BuiltinOps();

}  // namespace kiln::ops

#endif  // KILN_OPS_BUILTIN_OPS_H_
