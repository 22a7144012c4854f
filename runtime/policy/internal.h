/* Internals shared by the files of runtime/policy; not public. The engine is split by concern:
 *   budget.c   the counting allocator (memory limit), the count hook (instruction budget) and
 *              the budgeted call that arms them
 *   error.c    the traceback handler and the one place a Lua error becomes halo's message
 *   sandbox.c  the restricted environment and the halo module
 *   view.c     the read-only context objects over the caller's structs, and their docs
 *   load.c     opening, running the policy file, checking its table, --set, closing
 *   hooks.c    calling each hook and validating its results
 *   array.c    halo arrays: the core (memory, views, argument checks, basic methods, reductions)
 *   array_elem.c   element-wise array methods; array_order.c sorting, top-k, search
 *   names.c    the hook names, the policy's name and the time-limit text (used by all)
 *   data.c data files; check.c policy check */
#ifndef HALO_POLICY_INTERNAL_H
#define HALO_POLICY_INTERNAL_H

#include "policy/policy.h"

#include <lauxlib.h>
#include <lua.h>

/* Element types of halo arrays. */
enum { HALO_PA_I32, HALO_PA_I64, HALO_PA_F32, HALO_PA_F64, HALO_PA_BOOL, HALO_PA_NTYPES };

/* Metatable names in the registry. */
#define HALO_PA_MT "halo.array"
#define HALO_PCTX_MT "halo.ctx"

/* The userdata behind a halo array. Owned arrays keep their elements right after this header in
 * the same userdata (so Lua's allocator, and its memory limit, pays for them); views point at
 * the caller's memory and are valid only during the hook call that created them. */
typedef struct halo_policy_array {
    void *data;       /* elements */
    int64_t n;        /* element count */
    uint8_t type;     /* HALO_PA_* */
    uint8_t readonly; /* writes are refused */
    uint8_t borrowed; /* a view of runtime memory (checked against the state's call generation) */
    uint8_t pad;      /* unused */
    uint32_t gen;     /* call generation at creation (views only) */
    const char *name; /* "ctx.cache.score" for views, NULL otherwise */
} halo_policy_array;

/* One registered function or method: the same table registers it and prints `halo policy doc`. */
typedef struct halo_policy_reg {
    const char *name; /* Lua name */
    lua_CFunction fn; /* implementation */
    const char *sig;  /* signature as shown in the docs */
    const char *doc;  /* one line */
} halo_policy_reg;

/* Module functions (halo.*) and array methods (a:*), each ending with a NULL name: the core's
 * (array.c), the element-wise ones (array_elem.c) and the ordering ones (array_order.c). */
extern const halo_policy_reg halo_policy_module_funcs[];
extern const halo_policy_reg halo_policy_array_methods[];
extern const halo_policy_reg halo_policy_array_elem_methods[];
extern const halo_policy_reg halo_policy_array_order_methods[];
/* The three method tables above, NULL-terminated (sandbox.c: it opens them; check.c: doc). */
extern const halo_policy_reg *const halo_policy_array_tables[];

/* The engine's state, reachable from Lua through the state's extra space. */
struct halo_policy {
    lua_State *L;                     /* the state */
    char path[1024];                  /* policy file as given ("" for built-in defaults) */
    char dir[1024];                   /* its directory (modules next to the policy) */
    char luadir[1024];                /* halo's lua/ directory */
    char name[128];                   /* policy name */
    bool unsafe;                      /* full standard library */
    int rank;                         /* rank for messages */
    char **params;                    /* copies of the --set strings */
    int nparams;                      /* entries in params */
    int64_t budget;                   /* instructions per call */
    int64_t used;                     /* instructions charged in the current call */
    int64_t work;                     /* instructions charged over every finished call */
    int step;                         /* count-hook period */
    bool over;                        /* budget or time exhausted in the current call */
    bool timed_out;                   /* the current call ran past its wall-clock limit */
    double time_limit;                /* seconds of wall clock per call */
    double deadline;                  /* monotonic clock at which the current call times out */
    bool in_call;                     /* a budgeted call is running */
    size_t mem_limit;                 /* bytes allowed */
    size_t mem_used;                  /* bytes held */
    bool mem_refused;                 /* the allocator refused a request in this call */
    char mem_where[300];              /* "file:line" of the first refused request in this call */
    uint32_t gen;                     /* call generation: views made in an earlier call are stale */
    int hook_ref[HALO_POLICY_NHOOKS]; /* registry refs of the hook functions, LUA_NOREF = none */
    int hook_line[HALO_POLICY_NHOOKS]; /* line where each hook is defined */
    int params_ref;                    /* registry ref of the params table */
    int ctx_mt_ref;                    /* registry ref of the ctx proxy metatable */
    /* the moment of the current call, for error messages */
    const char *cur_hook; /* hook name or "load" */
    int cur_rank;         /* rank, -1 none */
    int cur_epoch;        /* epoch, -1 none */
    int64_t cur_batch;    /* batch, -1 none */
    /* scratch of the cache_batch validation, kept between calls (stamps, never cleared) */
    uint32_t *vstamp;     /* [vstamp_n] per halo position: vgen = cached, vgen + 1 = admitted */
    int64_t vstamp_n;     /* entries of vstamp */
    uint32_t *sstamp;     /* [sstamp_n] per slot: vgen = evicted by this decision */
    int64_t sstamp_n;     /* entries of sstamp */
    uint32_t vgen;        /* stamp of the current validation (even, grows by 2 per call) */
    void *scratch;        /* temporary memory of the vector methods (topk), kept between calls */
    size_t scratch_bytes; /* its size */
};

/* The policy that owns L. */
static inline halo_policy *halo_policy_of(lua_State *L)
{
    return *(halo_policy **)lua_getextraspace(L);
}

/* The instruction-budget count hook of every budgeted call (budget.c): every `step` instructions
 * it charges the call, and once the budget is spent it fires on every instruction so pcall
 * cannot swallow it. Also arms the data loader's run of a file (data.c). */
void halo_policy_count_hook(lua_State *L, lua_Debug *ar);

/* Scratch memory of at least bytes for the current method (valid until the next call; C heap,
 * reused, so that a per-batch topk does not allocate and fault in fresh pages every time). */
void *halo_policy_scratch(lua_State *L, size_t bytes);
/* Charges n elements of vector work against the call's budget (one instruction per 16). */
void halo_policy_charge(lua_State *L, int64_t n);
/* Charges units instructions of work done in C and looks at the clock: a Lua error when the
 * budget or the time of the call is spent (nothing outside a budgeted call). */
void halo_policy_spend(lua_State *L, int64_t units);
/* Registers the array metatable with the methods of the given tables (NULL-terminated) and
 * puts the module functions into the table on top. */
void halo_policy_open_arrays(lua_State *L, const halo_policy_reg *const *tables);
/* Pushes a zero-copy view of caller memory valid until the current hook call returns. */
void halo_policy_push_view(lua_State *L, void *data, int64_t n, int type, bool writable,
                           const char *name);
/* Pushes a new zeroed owned array (errors in Lua when n is out of range). */
halo_policy_array *halo_policy_new_array(lua_State *L, int type, int64_t n);
/* The array at idx, or NULL when it is not one; raises a Lua error for a stale view. */
halo_policy_array *halo_policy_to_array(lua_State *L, int idx);
/* "int32", ... */
const char *halo_policy_type_name(int type);
/* Prints the context field tables (view.c) and hook table for the docs. */
void halo_policy_doc_hooks(FILE *out);

/* ---- budget.c ---- */
/* lua_Alloc of every state: counts bytes against the memory limit (ud is the halo_policy). */
void *halo_policy_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* Calls the function below nargs arguments with the limits armed and a traceback handler.
 * Leaves nres results on success; on failure sets the error and pops everything. */
int halo_policy_budgeted_call(halo_policy *p, int nargs, int nres);
/* Arms the limits for one call (budget, memory-refusal record, deadline, count hook) / disarms. */
void halo_policy_arm(halo_policy *p);
void halo_policy_disarm(halo_policy *p);

/* ---- names.c ---- */
/* "wall-clock limit of 5 s per call exceeded" into buf. */
const char *halo_policy_time_text(const halo_policy *p, char *buf, size_t size);

/* ---- error.c ---- */
/* Message handler of budgeted calls: adds a traceback. */
int halo_policy_msgh(lua_State *L);
/* " (hook cache_batch, rank 3, epoch 2, batch 17)" for the current call into buf. */
void halo_policy_moment(const halo_policy *p, char *buf, size_t size, bool with_hook);
/* Sets the halo error from the Lua error at the top of the stack (popped); returns HALO_ELUA. */
int halo_policy_report(halo_policy *p, int status);
/* Runs the C function below nargs arguments in protected mode; a Lua error becomes
 * "FILE:LINE: hook NAME: <message> (moment)" (hook < 0: "FILE: <message>"). Leaves nres. */
int halo_policy_protected_check(halo_policy *p, int hook, int nargs, int nres);

/* ---- sandbox.c ---- */
/* Opens the libraries and the halo module into p's state (runs under lua_pcall). */
int halo_policy_setup_state(lua_State *L);
/* Whether path names a regular file. */
bool halo_policy_file_exists(const char *path);

/* ---- pattern.c ---- */
/* Puts find, match, gmatch and gsub (Lua's pattern language, matched by a matcher that pays
 * for every step) into the table on top. */
void halo_policy_open_patterns(lua_State *L);

/* ---- view.c ---- */
enum { HALO_POBJ_CTX, HALO_POBJ_BATCH, HALO_POBJ_G };
/* Pushes a read-only context object (ctx, b or g) over the caller's struct, valid for one call. */
void halo_policy_push_context(lua_State *L, const void *base, int kind);
/* Creates the context objects' metatable and keeps it in p->ctx_mt_ref. */
void halo_policy_create_obj_metatable(lua_State *L, halo_policy *p);

#endif
