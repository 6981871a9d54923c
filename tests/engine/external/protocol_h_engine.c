/* An engine on examples/engines/protocol.h that uses all of it, where the C example uses part:
 * an int parameter, one without bounds, one that says where it acts; depths 1 to 12, no rule of
 * its own, node budgets. Built with -DAS_BEFORE, it is an adapter written before the header's
 * optional fields: positional initializers that leave them out. Its play is the C example's
 * (compiled in, its main renamed), its depth capped at 2 (depth:12 is read as 12, played as 2).
 * tests/engine/external/test_c_engine.py builds and runs it. */

#define main c_example_main
#include "../../../examples/engines/c_engine.c"
#undef main

#ifdef AS_BEFORE

static protocol_param declared[] = {
    {"monotonicity_power", 4.0, 1.0, 8.0},
    {"empty_weight", 270.0, 0.0, 10000.0},
};
static const int SOURCE[] = {MONOTONICITY_POWER, EMPTY_WEIGHT};

#else

static protocol_param declared[] = {
    {"monotonicity_power", 4.0, 1.0, 8.0, 1, NULL},           /* whole */
    {"empty_weight", 270.0, NAN, NAN, 0, NULL},               /* no bounds */
    {"lost_penalty", 200000.0, 0.0, 1000000.0, 0, "depth:2"}, /* idle at depth:1, its lowest */
};
static const int SOURCE[] = {MONOTONICITY_POWER, EMPTY_WEIGHT, LOST_PENALTY};

#endif

static void changed_declared(int param) {
    params[SOURCE[param]].value = declared[param].value;
    changed(SOURCE[param]);
}

static int choose_capped(uint64_t board, int depth, uint64_t *evaluated) {
    return choose(board, depth < 2 ? depth : 2, evaluated);
}

int main(int argc, char **argv) {
    build_move_tables();
#ifdef AS_BEFORE
    static const protocol_engine engine = {"as-before 1.0", declared, 2, 1, changed_declared,
                                           prepare, choose_capped, move};
#else
    static const protocol_engine engine = {
        .name = "full-protocol 1.0", .params = declared, .param_count = 3, .max_depth = 12,
        .changed = changed_declared, .prepare = prepare, .choose = choose_capped, .move = move,
        .min_depth = 1, .no_auto = 1, .choose_nodes = choose_nodes};
#endif
    return protocol_main(&engine, argc, argv);
}
