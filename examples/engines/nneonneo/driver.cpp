// tune2048's engine protocol, version 1 (docs/engine-protocol.md), around nneonneo/2048-ai's own
// search: its 2048.cpp is compiled into this file, its `main` renamed and its seven heuristic
// constants made variables by build.py (nothing else of it changed), so that tune2048 can set
// them and play seeded games in that engine.
//
// What is that engine's own: the move and heuristic tables (init_tables, rebuilt when a constant
// changes), execute_move, and the search: a move is chosen as its find_best_move chooses it
// (each move scored by _score_toplevel_move with a fresh eval_state, the best positive score
// wins), with `depth:N` setting the eval_state's depth_limit (chance layers) and `auto` its own
// rule, max(3, distinct tiles - 2). What is ours (../protocol.h, as the C example's): the protocol,
// the game loop and a game's seeded spawns, and not printing the search's own per-move lines. A
// move's points are what its score_board gains by it (the merged tiles).
//
// Build: python examples/engines/nneonneo/build.py --source PATH_TO_2048-ai

#define main nneonneo_main
#include "2048.cpp"
#undef main

#include "../protocol.h"

#define NAME "nneonneo-2048-ai (tune2048 driver 1.0)"
#define MAX_DEPTH 8

// Its seven constants, as parameters: their defaults are its own values (read in main).
static protocol_param params[] = {
    {"lost_penalty", 0.0, 0.0, 1000000.0},
    {"monotonicity_power", 0.0, 1.0, 8.0},
    {"monotonicity_weight", 0.0, 0.0, 1000.0},
    {"sum_power", 0.0, 1.0, 8.0},
    {"sum_weight", 0.0, 0.0, 1000.0},
    {"merges_weight", 0.0, 0.0, 10000.0},
    {"empty_weight", 0.0, 0.0, 10000.0},
};
static float *const theirs[] = {&SCORE_LOST_PENALTY, &SCORE_MONOTONICITY_POWER,
                                &SCORE_MONOTONICITY_WEIGHT, &SCORE_SUM_POWER, &SCORE_SUM_WEIGHT,
                                &SCORE_MERGES_WEIGHT, &SCORE_EMPTY_WEIGHT};
static const int PARAM_COUNT = sizeof params / sizeof params[0];
static bool tables_stale = true;

static void changed(int param) {
    *theirs[param] = (float)params[param].value;
    tables_stale = true;
}

static void prepare(void) {
    if (tables_stale) init_tables();
    tables_stale = false;
}

// Its find_best_move's choice, silent, at `depth` chance layers (SEARCH_AUTO: its own rule).
static int choose(uint64_t board, int depth, uint64_t *positions) {
    float best = 0.0f;
    int chosen = -1;
    for (int move = 0; move < 4; move++) {
        eval_state state;
        state.depth_limit = depth == SEARCH_AUTO ? std::max(3, count_distinct_tiles(board) - 2)
                                                 : depth;
        float worth = _score_toplevel_move(state, board, move);
        *positions += state.moves_evaled;
        if (worth > best) {
            best = worth;
            chosen = move;
        }
    }
    return chosen;
}

static uint64_t move(uint64_t board, int direction, uint64_t *points) {
    board_t moved = execute_move(direction, board);
    *points = (uint64_t)llround(score_board(moved) - score_board(board));
    return moved;
}

int main(int argc, char **argv) {
    static const protocol_engine engine = {NAME, params, PARAM_COUNT, MAX_DEPTH, changed,
                                           prepare, choose, move};
    for (int i = 0; i < PARAM_COUNT; i++) params[i].value = *theirs[i];
    return protocol_main(&engine, argc, argv);
}
