/* Policy engine, views: the read-only context objects (ctx, b, g) over the caller's structs,
 * their field tables, and the hook and context documentation. */
#include "policy/internal.h"

#include <stddef.h>
#include <string.h>

/* ---- context objects ---- */

enum { FK_INT, FK_I64, FK_F64, FK_STR, FK_ARR, FK_SUB, FK_PARAMS, FK_NAMES };

struct pdesc;
/* One field of a context object. */
typedef struct pfield {
    const char *name;        /* Lua name (== C field name) */
    uint8_t kind;            /* FK_* */
    uint8_t elem;            /* arrays: HALO_PA_* */
    uint8_t writable;        /* arrays: writable view */
    int8_t len_add;          /* arrays: length = *(int64 *)(base + len_off) + len_add */
    size_t off;              /* offset of the value (or of the array pointer) */
    size_t len_off;          /* arrays: offset of the int64 length */
    const struct pdesc *sub; /* FK_SUB: the nested object */
    const char *full;        /* "ctx.halo.ids" (for messages and docs) */
    const char *doc;         /* one line */
} pfield;

/* A context object type. */
typedef struct pdesc {
    const char *name;     /* "ctx.halo" */
    const pfield *fields; /* ends with a NULL name */
} pdesc;

#define F_INT(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_INT, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_I64(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_I64, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_F64(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_F64, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_STR(S, P, f, d)                                                                          \
    {                                                                                              \
#f, FK_STR, 0, 0, 0, offsetof(S, f), 0, NULL, P "." #f, d                                  \
    }
#define F_ARR(S, P, f, t, w, n, a, d)                                                              \
    {                                                                                              \
#f, FK_ARR, t, w, a, offsetof(S, f), offsetof(S, n), NULL, P "." #f, d                     \
    }
#define F_NAMES(S, P, f, n, d)                                                                     \
    {                                                                                              \
#f, FK_NAMES, 0, 0, 0, offsetof(S, f), offsetof(S, n), NULL, P "." #f, d                   \
    }
#define F_SUB(S, P, f, D, d)                                                                       \
    {                                                                                              \
#f, FK_SUB, 0, 0, 0, offsetof(S, f), 0, &D, P "." #f, d                                    \
    }
#define F_PARAMS(P)                                                                                \
    {                                                                                              \
        "params", FK_PARAMS, 0, 0, 0, 0, 0, NULL, P ".params",                                     \
            "the policy's parameters: its `params` defaults overridden by --set"                   \
    }
#define F_END                                                                                      \
    {                                                                                              \
        NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL                                                   \
    }

#define STATS_FIELDS(P)                                                                            \
    F_INT(halo_policy_stats, P, epoch, "epoch"),                                                   \
        F_I64(halo_policy_stats, P, batch, "batch within the epoch"),                              \
        F_I64(halo_policy_stats, P, batches, "batches counted"),                                   \
        F_I64(halo_policy_stats, P, seeds, "seed nodes"),                                          \
        F_I64(halo_policy_stats, P, input_nodes, "input nodes of the first block"),                \
        F_I64(halo_policy_stats, P, sampled_edges, "sampled edges"),                               \
        F_I64(halo_policy_stats, P, remote_nodes, "input nodes owned by other ranks"),             \
        F_I64(halo_policy_stats, P, cache_hits, "halo input nodes found in the cache"),            \
        F_I64(halo_policy_stats, P, cache_misses, "halo input nodes not in the cache"),            \
        F_I64(halo_policy_stats, P, bytes_remote, "feature bytes pulled from other ranks"),        \
        F_F64(halo_policy_stats, P, loss, "mean training loss"),                                   \
        F_F64(halo_policy_stats, P, time_s, "wall time (s)"),                                      \
        F_F64(halo_policy_stats, P, sample_s, "sampling time (s)"),                                \
        F_F64(halo_policy_stats, P, fetch_s, "feature pull time (s)"),                             \
        F_F64(halo_policy_stats, P, compute_s, "forward + backward time (s)"),                     \
        F_F64(halo_policy_stats, P, wait_s, "time spent waiting (s)"), F_END

static const pfield last_batch_fields[] = {STATS_FIELDS("ctx.last_batch")};
static const pfield last_epoch_fields[] = {STATS_FIELDS("ctx.last_epoch")};
static const pdesc last_batch_desc = {"ctx.last_batch", last_batch_fields};
static const pdesc last_epoch_desc = {"ctx.last_epoch", last_epoch_fields};

static const pfield graph_fields[] = {
    F_I64(halo_policy_graph_summary, "ctx.graph", nodes, "nodes of the whole graph"),
    F_I64(halo_policy_graph_summary, "ctx.graph", edges, "edges of the whole graph"),
    F_INT(halo_policy_graph_summary, "ctx.graph", feat_dim, "features per node"),
    F_INT(halo_policy_graph_summary, "ctx.graph", classes, "label classes"),
    F_I64(halo_policy_graph_summary, "ctx.graph", train_nodes, "training nodes"),
    F_I64(halo_policy_graph_summary, "ctx.graph", ntypes, "node types (0: homogeneous)"),
    F_NAMES(halo_policy_graph_summary, "ctx.graph", node_types, ntypes,
            "{name, ...} node type names by type id + 1 (nil when homogeneous)"),
    F_I64(halo_policy_graph_summary, "ctx.graph", nrels, "relations (0: homogeneous)"),
    F_NAMES(halo_policy_graph_summary, "ctx.graph", relations, nrels,
            "{name, ...} relation names by relation id + 1 (nil when homogeneous)"),
    F_STR(halo_policy_graph_summary, "ctx.graph", target_type,
          "the labelled node type's name (nil when homogeneous)"),
    F_END,
};
static const pdesc graph_desc = {"ctx.graph", graph_fields};

static const pfield part_fields[] = {
    F_INT(halo_policy_part_summary, "ctx.part", parts, "parts in the partition"),
    F_INT(halo_policy_part_summary, "ctx.part", id, "this rank's part"),
    F_I64(halo_policy_part_summary, "ctx.part", nodes, "nodes this part owns"),
    F_I64(halo_policy_part_summary, "ctx.part", edges, "in-edges of the nodes it owns"),
    F_I64(halo_policy_part_summary, "ctx.part", train_nodes, "its training seeds"),
    F_END,
};
static const pdesc part_desc = {"ctx.part", part_fields};

static const pfield halo_fields[] = {
    F_I64(halo_policy_halo_view, "ctx.halo", n, "halo nodes of this rank"),
    F_ARR(halo_policy_halo_view, "ctx.halo", ids, HALO_PA_I32, 0, n, 0,
          "int32[n] global ids, sorted ascending (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", deg, HALO_PA_I32, 0, n, 0,
          "int32[n] in-degree in the whole graph (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", owner, HALO_PA_I32, 0, n, 0,
          "int32[n] part that owns each (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", misses, HALO_PA_I64, 0, n, 0,
          "int64[n] cache misses so far (read-only)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", ntype, HALO_PA_I32, 0, n, 0,
          "int32[n] node type id of each, 0-based (read-only; nil when homogeneous)"),
    F_ARR(halo_policy_halo_view, "ctx.halo", score, HALO_PA_F64, 1, n, 0,
          "float64[n] policy-owned score, writable, kept between calls"),
    F_END,
};
static const pdesc halo_desc = {"ctx.halo", halo_fields};

static const pfield cache_fields[] = {
    F_I64(halo_policy_cache_view, "ctx.cache", capacity, "slots"),
    F_I64(halo_policy_cache_view, "ctx.cache", used, "occupied slots"),
    F_ARR(halo_policy_cache_view, "ctx.cache", id, HALO_PA_I32, 0, capacity, 0,
          "int32[capacity] global id in each slot, -1 = empty (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", hits, HALO_PA_I64, 0, capacity, 0,
          "int64[capacity] hits since the node entered (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", last_hit, HALO_PA_I64, 0, capacity, 0,
          "int64[capacity] step of the last hit, -1 = none (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", inserted, HALO_PA_I64, 0, capacity, 0,
          "int64[capacity] step at which the node entered (read-only)"),
    F_ARR(halo_policy_cache_view, "ctx.cache", score, HALO_PA_F64, 1, capacity, 0,
          "float64[capacity] policy-owned slot score, writable, kept between calls"),
    F_ARR(halo_policy_cache_view, "ctx.cache", pos, HALO_PA_I32, 0, capacity, 0,
          "int32[capacity] halo position of the node in each slot, -1 = empty (read-only; nil when "
          "the caller does not provide it)"),
    F_END,
};
static const pdesc cache_desc = {"ctx.cache", cache_fields};

static const pfield ctx_fields[] = {
    F_INT(halo_policy_ctx, "ctx", rank, "this rank"),
    F_INT(halo_policy_ctx, "ctx", ranks, "ranks of the run"),
    F_INT(halo_policy_ctx, "ctx", epoch, "current epoch, 0-based (-1 before training)"),
    F_INT(halo_policy_ctx, "ctx", epochs, "planned epochs (0 = unknown)"),
    F_I64(halo_policy_ctx, "ctx", batch, "batch within the epoch (-1 outside a batch)"),
    F_I64(halo_policy_ctx, "ctx", batches, "batches per epoch (0 = unknown)"),
    F_I64(halo_policy_ctx, "ctx", step, "batches since training started, 0-based"),
    F_INT(halo_policy_ctx, "ctx", batch_size, "seeds per batch"),
    F_PARAMS("ctx"),
    F_SUB(halo_policy_ctx, "ctx", graph, graph_desc, "summary of the whole graph"),
    F_SUB(halo_policy_ctx, "ctx", part, part_desc, "summary of this rank's part"),
    F_SUB(halo_policy_ctx, "ctx", halo, halo_desc, "this rank's halo set"),
    F_SUB(halo_policy_ctx, "ctx", cache, cache_desc, "the remote-feature cache"),
    F_SUB(halo_policy_ctx, "ctx", last_batch, last_batch_desc, "counters of the last batch"),
    F_SUB(halo_policy_ctx, "ctx", last_epoch, last_epoch_desc, "counters of the last epoch"),
    F_END,
};
static const pdesc ctx_desc = {"ctx", ctx_fields};

static const pfield g_fields[] = {
    F_STR(halo_policy_graph_info, "g", name, "graph name"),
    F_I64(halo_policy_graph_info, "g", nodes, "nodes"),
    F_I64(halo_policy_graph_info, "g", edges, "edges"),
    F_INT(halo_policy_graph_info, "g", feat_dim, "features per node"),
    F_INT(halo_policy_graph_info, "g", classes, "label classes"),
    F_I64(halo_policy_graph_info, "g", train_nodes, "training nodes"),
    F_INT(halo_policy_graph_info, "g", parts, "parts asked for on the command line (0 = none)"),
    F_ARR(halo_policy_graph_info, "g", indptr, HALO_PA_I64, 0, nodes, 1,
          "int64[nodes+1] in-edge CSR offsets (read-only; nil when not loaded)"),
    F_ARR(halo_policy_graph_info, "g", indices, HALO_PA_I32, 0, edges, 0,
          "int32[edges] sources of the in-edges (read-only; nil when not loaded)"),
    F_PARAMS("g"),
    F_END,
};
static const pdesc g_desc = {"g", g_fields};

static const pfield batch_fields[] = {
    F_INT(halo_policy_batch, "b", epoch, "epoch"),
    F_I64(halo_policy_batch, "b", batch, "batch within the epoch"),
    F_I64(halo_policy_batch, "b", step, "batches since training started"),
    F_I64(halo_policy_batch, "b", n_input, "input nodes"),
    F_ARR(halo_policy_batch, "b", input, HALO_PA_I32, 0, n_input, 0,
          "int32[n_input] global ids of the input nodes (read-only)"),
    F_I64(halo_policy_batch, "b", n_hit, "halo input nodes found in the cache"),
    F_ARR(halo_policy_batch, "b", hit_slots, HALO_PA_I32, 0, n_hit, 0,
          "int32[n_hit] their slots, distinct (read-only)"),
    F_I64(halo_policy_batch, "b", n_miss, "halo input nodes not in the cache"),
    F_ARR(halo_policy_batch, "b", miss_halo, HALO_PA_I32, 0, n_miss, 0,
          "int32[n_miss] their positions in ctx.halo.ids, distinct (read-only)"),
    F_END,
};
static const pdesc batch_desc = {"b", batch_fields};

/* A context object in Lua: a pointer to the caller's struct, valid during one call. */
typedef struct pobj {
    const void *base;  /* the C struct */
    const pdesc *desc; /* its fields */
    uint32_t gen;      /* call generation */
} pobj;

static void push_obj(lua_State *L, const void *base, const pdesc *desc)
{
    halo_policy *p = halo_policy_of(L);
    pobj *o = lua_newuserdatauv(L, sizeof *o, 0);
    o->base = base;
    o->desc = desc;
    o->gen = p->gen;
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ctx_mt_ref);
    lua_setmetatable(L, -2);
}

void halo_policy_push_context(lua_State *L, const void *base, int kind)
{
    push_obj(L, base,
             kind == HALO_POBJ_CTX     ? &ctx_desc
             : kind == HALO_POBJ_BATCH ? &batch_desc
                                       : &g_desc);
}

static pobj *check_obj(lua_State *L)
{
    pobj *o = lua_touserdata(L, 1);
    if (o->gen != halo_policy_of(L)->gen) {
        luaL_error(L, "%s was used after its hook call returned", o->desc->name);
    }
    return o;
}

static int obj_index(lua_State *L)
{
    pobj *o = check_obj(L);
    const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    const pfield *f = o->desc->fields;
    for (; k != NULL && f->name != NULL; f++) {
        if (strcmp(f->name, k) == 0) {
            break;
        }
    }
    if (k == NULL || f->name == NULL) {
        const char *key = luaL_tolstring(L, 2, NULL);
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (const pfield *g = o->desc->fields; g->name != NULL; g++) {
            luaL_addstring(&b, g == o->desc->fields ? "" : ", ");
            luaL_addstring(&b, g->name);
        }
        luaL_pushresult(&b);
        return luaL_error(L, "%s has no field '%s' (fields: %s)", o->desc->name, key,
                          lua_tostring(L, -1));
    }
    const char *base = o->base;
    switch (f->kind) {
    case FK_INT: lua_pushinteger(L, *(const int *)(base + f->off)); break;
    case FK_I64: lua_pushinteger(L, *(const int64_t *)(base + f->off)); break;
    case FK_F64: lua_pushnumber(L, *(const double *)(base + f->off)); break;
    case FK_STR: lua_pushstring(L, *(const char *const *)(base + f->off)); break;
    case FK_SUB: push_obj(L, base + f->off, f->sub); break;
    case FK_PARAMS: lua_rawgeti(L, LUA_REGISTRYINDEX, halo_policy_of(L)->params_ref); break;
    case FK_NAMES: {
        const char *const *names = *(const char *const *const *)(base + f->off);
        int64_t n = *(const int64_t *)(base + f->len_off);
        if (names == NULL || n <= 0) {
            lua_pushnil(L);
            break;
        }
        lua_createtable(L, (int)n, 0); /* a fresh table: the policy may keep or change it */
        for (int64_t i = 0; i < n; i++) {
            lua_pushstring(L, names[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
    } break;
    default: {
        void *data = *(void *const *)(base + f->off);
        int64_t n = *(const int64_t *)(base + f->len_off) + f->len_add;
        if (data == NULL || n < 0) {
            lua_pushnil(L);
        } else {
            halo_policy_push_view(L, data, n, f->elem, f->writable, f->full);
        }
    } break;
    }
    return 1;
}

static int obj_newindex(lua_State *L)
{
    pobj *o = check_obj(L);
    return luaL_error(L, "%s is read-only (assigning field '%s')", o->desc->name,
                      luaL_tolstring(L, 2, NULL));
}

static int obj_tostring(lua_State *L)
{
    pobj *o = lua_touserdata(L, 1);
    lua_pushstring(L, o->desc->name);
    return 1;
}

void halo_policy_create_obj_metatable(lua_State *L, halo_policy *p)
{
    lua_newtable(L);
    lua_pushcfunction(L, obj_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, obj_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, obj_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    p->ctx_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Prints one context object's fields and its nested objects. */
static void doc_obj(FILE *out, const pdesc *d)
{
    fprintf(out, "\n%s\n", d->name);
    for (const pfield *f = d->fields; f->name != NULL; f++) {
        fprintf(out, "  %-28s %s\n", f->full, f->doc);
    }
    for (const pfield *f = d->fields; f->name != NULL; f++) {
        if (f->kind == FK_SUB && f->sub != &last_epoch_desc) {
            doc_obj(out, f->sub);
        }
    }
}

/* Hook documentation: name, signature, when it runs, what it returns, default. */
static const char *const hook_docs[HALO_POLICY_NHOOKS][3] = {
    {"partition(g) -> {method=, parts=, constraints=, imbalance=, objective=, seed=, assign=}",
     "once, by `halo partition`: method metis|multilevel|random|stream|custom, constraints among "
     "\"nodes\",\"train\",\"edges\", objective \"cut\"|\"vol\", assign = int32[nodes] (custom)",
     "metis, g.parts parts, {\"nodes\",\"train\"}, imbalance 1.05, cut"},
    {"fanout(ctx) -> {f1, f2, ...}",
     "each epoch: per-layer fanouts, input layer first, -1 = all; on a typed graph a layer may be "
     "{REL=N, [\"*\"]=N}",
     "{10, 25}"},
    {"pipeline(ctx) -> {depth=, sampler_threads=} | depth",
     "each epoch: batches prepared ahead (0 = synchronous) and sampler threads; a bare number is "
     "the depth with one sampler thread",
     "depth 0, 1 thread"},
    {"cache_init(ctx) -> {capacity=, ids=, score=}",
     "once per rank: slots, initial halo ids (slot i gets ids[i]), initial slot score",
     "capacity 0 (no cache)"},
    {"cache_batch(ctx, b) -> {evict=, admit=} | nil",
     "after each batch's lookup: slots to free, halo ids to admit (pulled with the misses; "
     "admit[i] goes into evict[i], the rest into free slots)",
     "nothing"},
    {"epoch_end(ctx) -> nil", "after each epoch: read ctx.last_epoch, adapt parameters", "nothing"},
};

void halo_policy_doc_hooks(FILE *out)
{
    fprintf(out, "hooks (a policy returns a table of them; a missing hook takes the default)\n");
    for (int h = 0; h < HALO_POLICY_NHOOKS; h++) {
        fprintf(out, "  %s\n      %s\n      default: %s\n", hook_docs[h][0], hook_docs[h][1],
                hook_docs[h][2]);
    }
    fprintf(out,
            "\ncontext objects (read-only; arrays are zero-copy views valid during the call)\n");
    doc_obj(out, &ctx_desc);
    fprintf(out, "\nctx.last_epoch\n  same fields as ctx.last_batch, summed over the last epoch\n");
    doc_obj(out, &batch_desc);
    doc_obj(out, &g_desc);
}
