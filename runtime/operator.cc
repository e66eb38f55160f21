// KilnOperator (kiln/operator.h): the description of one op kernel and its callbacks.
#include "kiln/operator.h"

#include <new>

#include "runtime/core.h"

std::string KilnOperator::DisplayName() const {
  return is_custom() ? custom_name : kiln::BuiltinOperatorName(builtin_code);
}

void* KilnOperator::Init(KilnOpaqueContext* context, const char* buffer, size_t length) const {
  if (hooks != nullptr) return hooks->init(this, context, buffer, length);
  if (init_with_data) return init_with_data(user_data, context, buffer, length);
  if (init) return init(context, buffer, length);
  return nullptr;
}

void KilnOperator::Free(KilnOpaqueContext* context, void* data) const {
  if (hooks != nullptr) {
    hooks->free(this, context, data);
  } else if (free_with_data) {
    free_with_data(user_data, context, data);
  } else if (free) {
    free(context, data);
  }
}

KilnStatus KilnOperator::AuthorPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) const {
  if (prepare_with_data) return prepare_with_data(user_data, context, node);
  if (prepare) return prepare(context, node);
  return kKilnOk;
}

KilnStatus KilnOperator::Prepare(KilnOpaqueContext* context, KilnOpaqueNode* node) const {
  return hooks != nullptr ? hooks->prepare(this, context, node) : AuthorPrepare(context, node);
}

KilnStatus KilnOperator::Invoke(KilnOpaqueContext* context, KilnOpaqueNode* node) const {
  if (hooks != nullptr) return hooks->invoke(this, context, node);
  if (invoke_with_data) return invoke_with_data(user_data, context, node);
  if (invoke) return invoke(context, node);
  return kKilnOk;
}

extern "C" {

KilnOperator* KilnOperatorCreateWithData(KilnBuiltinOperator builtin_code, const char* custom_name,
                                         int version, void* user_data) {
  const bool is_custom = builtin_code == kKilnBuiltinCustom;
  if (is_custom != (custom_name != nullptr) || (is_custom && custom_name[0] == '\0') || version < 1) {
    return nullptr;
  }
  auto* op = new (std::nothrow) KilnOperator;
  if (op == nullptr) return nullptr;
  op->builtin_code = builtin_code;
  if (custom_name != nullptr) op->custom_name = custom_name;
  op->version = version;
  op->user_data = user_data;
  return op;
}

KilnOperator* KilnOperatorCreate(KilnBuiltinOperator builtin_code, const char* custom_name, int version) {
  return KilnOperatorCreateWithData(builtin_code, custom_name, version, nullptr);
}

void KilnOperatorDelete(KilnOperator* op) { delete op; }

KilnBuiltinOperator KilnOperatorGetBuiltInCode(const KilnOperator* op) {
  return op ? op->builtin_code : kKilnBuiltinCustom;
}

const char* KilnOperatorGetCustomName(const KilnOperator* op) {
  return op && op->is_custom() ? op->custom_name.c_str() : nullptr;
}

int KilnOperatorGetVersion(const KilnOperator* op) { return op ? op->version : 0; }

void* KilnOperatorGetUserData(const KilnOperator* op) { return op ? op->user_data : nullptr; }

void KilnOperatorSetInit(KilnOperator* op, void* (*init)(KilnOpaqueContext*, const char*, size_t)) {
  if (op) op->init = init;
}
void KilnOperatorSetFree(KilnOperator* op, void (*free)(KilnOpaqueContext*, void*)) {
  if (op) op->free = free;
}
void KilnOperatorSetPrepare(KilnOperator* op, KilnStatus (*prepare)(KilnOpaqueContext*, KilnOpaqueNode*)) {
  if (op) op->prepare = prepare;
}
void KilnOperatorSetInvoke(KilnOperator* op, KilnStatus (*invoke)(KilnOpaqueContext*, KilnOpaqueNode*)) {
  if (op) op->invoke = invoke;
}
KilnStatus KilnOperatorSetInitWithData(KilnOperator* op,
                                       void* (*init)(void*, KilnOpaqueContext*, const char*, size_t)) {
  if (op == nullptr) return kKilnError;
  op->init_with_data = init;
  return kKilnOk;
}
KilnStatus KilnOperatorSetFreeWithData(KilnOperator* op, void (*free)(void*, KilnOpaqueContext*, void*)) {
  if (op == nullptr) return kKilnError;
  op->free_with_data = free;
  return kKilnOk;
}
KilnStatus KilnOperatorSetPrepareWithData(KilnOperator* op,
                                          KilnStatus (*prepare)(void*, KilnOpaqueContext*, KilnOpaqueNode*)) {
  if (op == nullptr) return kKilnError;
  op->prepare_with_data = prepare;
  return kKilnOk;
}
KilnStatus KilnOperatorSetInvokeWithData(KilnOperator* op,
                                         KilnStatus (*invoke)(void*, KilnOpaqueContext*, KilnOpaqueNode*)) {
  if (op == nullptr) return kKilnError;
  op->invoke_with_data = invoke;
  return kKilnOk;
}

void KilnOperatorSetInplaceOperator(KilnOperator* op, uint64_t inplace_operator) {
  if (op) op->inplace_operator = inplace_operator;
}
uint64_t KilnOperatorGetInplaceOperator(const KilnOperator* op) { return op ? op->inplace_operator : 0; }

}  // extern "C"
