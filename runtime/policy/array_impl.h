/* Private to the halo arrays (array.c: the core, array_elem.c: element-wise operations,
 * array_order.c: sorting, top-k and search): the per-type expansion macro and the argument
 * checks every method uses, defined once in array.c. */
#ifndef HALO_POLICY_ARRAY_IMPL_H
#define HALO_POLICY_ARRAY_IMPL_H

#include "policy/internal.h"

/* Expands the statement list once per element type with T bound to the C element type. */
#define TYPED(t, ...)                                                                              \
    switch (t) {                                                                                   \
    case HALO_PA_I32: {                                                                            \
        typedef int32_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case HALO_PA_I64: {                                                                            \
        typedef int64_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case HALO_PA_F32: {                                                                            \
        typedef float T;                                                                           \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    case HALO_PA_F64: {                                                                            \
        typedef double T;                                                                          \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    default: {                                                                                     \
        typedef uint8_t T;                                                                         \
        __VA_ARGS__;                                                                               \
    } break;                                                                                       \
    }

/* Numeric types only (bool arrays are refused before). */
#define IS_INT(t) ((t) == HALO_PA_I32 || (t) == HALO_PA_I64)
#define IS_FLT(t) ((t) == HALO_PA_F32 || (t) == HALO_PA_F64)

/* A halo_policy_scalar argument converted for an array of the given type: integers for integer
 * arrays (an integral float is accepted), numbers for float arrays, booleans for bool arrays. */
typedef struct halo_policy_scalar {
    int64_t i; /* integer arrays and bool */
    double f;  /* float arrays */
} halo_policy_scalar;

/* The array argument at idx (a Lua error naming the argument when it is not one). */
halo_policy_array *halo_policy_check_arr(lua_State *L, int idx);
/* The array at idx, which the caller is about to modify (a read-only one is an error). */
halo_policy_array *halo_policy_check_warr(lua_State *L, int idx);
/* The bool mask at idx; what names the method in the error. */
halo_policy_array *halo_policy_check_bool(lua_State *L, int idx, const char *what);
/* The int32 or int64 index array at idx. */
halo_policy_array *halo_policy_check_index(lua_State *L, int idx, const char *what);
/* Lua errors when two arrays' types, or two lengths, differ. */
void halo_policy_same_type(lua_State *L, const halo_policy_array *a, const halo_policy_array *b,
                           const char *what);
void halo_policy_same_len(lua_State *L, int64_t a, int64_t b, const char *what);
/* Pushes a new owned array whose elements the caller overwrites (not zeroed). */
halo_policy_array *halo_policy_new_raw(lua_State *L, int type, int64_t n);
/* The scalar argument at idx converted for an array of the given type. */
halo_policy_scalar halo_policy_check_scalar(lua_State *L, int idx, int type, const char *what);
/* A Lua error when an index of ix is outside [0, n). */
void halo_policy_check_indices(lua_State *L, const halo_policy_array *ix, int64_t n,
                               const char *what);

#endif
