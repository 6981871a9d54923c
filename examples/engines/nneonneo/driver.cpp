// tune2048's engine protocol, version 1 (docs/engine-protocol.md), around nneonneo/2048-ai's own
// search: its 2048.cpp is compiled into this file, its `main` renamed and its seven heuristic
// constants made variables by build.py (nothing else of it changed), so that tune2048 can set
// them and play seeded games in that engine.
//
// What is that engine's own: the move and heuristic tables (init_tables, rebuilt when a constant
// changes), execute_move, and the search: a move is chosen as its find_best_move chooses it
// (each move scored by _score_toplevel_move with a fresh eval_state, the best positive score
// wins), with `depth:N` setting the eval_state's depth_limit (chance layers) and `auto` its own
// rule, max(3, distinct tiles - 2). What is ours: the game loop, a game's seeded spawns (a 2, or a
// 4 one time in ten, on an empty cell chosen uniformly, from splitmix64 seeded with the game's
// seed, as examples/engines/c_engine.c), the protocol, and not printing the search's own
// per-move lines. The score is that engine's score_board less 4 for each 4 spawned, as its
// play_game reports it.
//
// Build: python examples/engines/nneonneo/build.py --source PATH_TO_2048-ai

#define main nneonneo_main
#include "2048.cpp"
#undef main

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#define NAME "nneonneo-2048-ai (tune2048 driver 1.0)"
#define MAX_DEPTH 8
#define AUTO -1
#define MAX_LINE 4096

struct param_t {
    const char *name;
    float *value;
    double low, high;
};

static param_t params[] = {
    {"lost_penalty", &SCORE_LOST_PENALTY, 0.0, 1000000.0},
    {"monotonicity_power", &SCORE_MONOTONICITY_POWER, 1.0, 8.0},
    {"monotonicity_weight", &SCORE_MONOTONICITY_WEIGHT, 0.0, 1000.0},
    {"sum_power", &SCORE_SUM_POWER, 1.0, 8.0},
    {"sum_weight", &SCORE_SUM_WEIGHT, 0.0, 1000.0},
    {"merges_weight", &SCORE_MERGES_WEIGHT, 0.0, 10000.0},
    {"empty_weight", &SCORE_EMPTY_WEIGHT, 0.0, 10000.0},
};
static const int PARAM_COUNT = sizeof params / sizeof params[0];
static const char *const DIRECTIONS[] = {"up", "down", "left", "right"};
static int tables_stale = 1;

static void say(const char *line) {
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static uint64_t next_random(uint64_t *state) {  // splitmix64
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static board_t spawn(board_t board, uint64_t *rng, int *cell, int *rank) {
    int empty = board == 0 ? 16 : count_empty(board);  // its count_empty needs a tile on the board
    int pick = (int)(next_random(rng) % (uint64_t)empty);
    *rank = next_random(rng) % 10 == 0 ? 2 : 1;
    for (int i = 0; i < 16; i++) {
        if (((board >> (4 * i)) & 0xF) == 0 && pick-- == 0) {
            *cell = i;
            return board | (board_t)*rank << (4 * i);
        }
    }
    abort();  // unreachable: the board had an empty cell
}

// Its find_best_move's choice, silent, at `depth` chance layers (AUTO: its own rule).
static int choose_move(board_t board, int depth, unsigned long *positions) {
    float best = 0.0f;
    int chosen = -1;
    for (int move = 0; move < 4; move++) {
        eval_state state;
        state.depth_limit = depth == AUTO ? std::max(3, count_distinct_tiles(board) - 2) : depth;
        float worth = _score_toplevel_move(state, board, move);
        *positions += state.moves_evaled;
        if (worth > best) {
            best = worth;
            chosen = move;
        }
    }
    return chosen;
}

static void play_one(uint64_t seed, int depth, bool trace) {
    char line[256];
    timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (tables_stale) {
        init_tables();
        tables_stale = 0;
    }
    uint64_t rng = seed;
    board_t board = 0;
    unsigned long positions = 0, moves = 0, fours = 0;
    int cell, rank, move;
    for (int i = 0; i < 2; i++) {
        board = spawn(board, &rng, &cell, &rank);
        fours += rank == 2;
        if (trace) {
            snprintf(line, sizeof line, "spawn cell=%d tile=%d", cell, 1 << rank);
            say(line);
        }
    }
    while ((move = choose_move(board, depth, &positions)) >= 0) {
        board = execute_move(move, board);
        moves++;
        if (trace) {
            char hex[17];
            for (int i = 0; i < 16; i++) hex[i] = "0123456789abcdef"[(board >> (4 * i)) & 0xF];
            hex[16] = '\0';
            snprintf(line, sizeof line, "move dir=%s board=%s", DIRECTIONS[move], hex);
            say(line);
        }
        board = spawn(board, &rng, &cell, &rank);
        fours += rank == 2;
        if (trace) {
            snprintf(line, sizeof line, "spawn cell=%d tile=%d", cell, 1 << rank);
            say(line);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    double score = score_board(board) - 4.0 * fours;
    snprintf(line, sizeof line,
             "game seed=%llu score=%.0f tile=%d moves=%lu positions=%lu seconds=%.6f",
             (unsigned long long)seed, score, 1 << get_max_rank(board), moves, positions, seconds);
    say(line);
}

static int parse_search(const char *text) {
    if (strcmp(text, "auto") == 0) return AUTO;
    if (strncmp(text, "depth:", 6) == 0 && text[6] >= '0' && text[6] <= '0' + MAX_DEPTH &&
        text[7] == '\0')
        return text[6] - '0';
    return -2;
}

static bool parse_seed(const char *text, uint64_t *seed) {
    size_t n = strlen(text);
    if (n == 0 || n > 19 || strspn(text, "0123456789") != n) return false;
    *seed = strtoull(text, NULL, 10);
    return true;
}

static void answer(char *request) {
    static char *words[MAX_LINE / 2 + 1];
    char reply[MAX_LINE + 64];
    int n = 0;
    for (char *word = strtok(request, " "); word && n < MAX_LINE / 2 + 1; word = strtok(NULL, " "))
        words[n++] = word;
    if (n == 0) return;
    if (strcmp(words[0], "set") == 0 && n == 3) {
        for (int i = 0; i < PARAM_COUNT; i++) {
            if (strcmp(words[1], params[i].name) != 0) continue;
            char *end;
            double v = strtod(words[2], &end);
            if (*end != '\0' || !std::isfinite(v)) {
                snprintf(reply, sizeof reply, "error %s: not a number: %.64s", words[1], words[2]);
                say(reply);
                return;
            }
            *params[i].value = (float)v;
            tables_stale = 1;
            say("ok");
            return;
        }
        snprintf(reply, sizeof reply, "error no parameter named %.64s", words[1]);
        say(reply);
    } else if ((strcmp(words[0], "play") == 0 || strcmp(words[0], "trace") == 0) && n >= 3) {
        int depth = parse_search(words[1]);
        uint64_t seed;
        if (depth == -2) {
            snprintf(reply, sizeof reply, "error search %.64s not supported (depth:0 to depth:%d, "
                     "auto)", words[1], MAX_DEPTH);
            say(reply);
            return;
        }
        for (int i = 2; i < n; i++) {
            if (!parse_seed(words[i], &seed)) {
                snprintf(reply, sizeof reply, "error not a seed: %.64s", words[i]);
                say(reply);
                return;
            }
        }
        for (int i = 2; i < n; i++) {
            parse_seed(words[i], &seed);
            play_one(seed, depth, words[0][0] == 't');
        }
        say("done");
    } else {
        say("error unknown request");
    }
}

int main() {
    static char line[MAX_LINE + 2];
    if (!fgets(line, sizeof line, stdin) || strncmp(line, "tune2048 ", 9) != 0) return 1;
    say("name " NAME);
    for (int i = 0; i < PARAM_COUNT; i++) {
        char declared[256];
        snprintf(declared, sizeof declared, "param %s float %.9g %.17g %.17g", params[i].name,
                 (double)*params[i].value, params[i].low, params[i].high);
        say(declared);
    }
    char depths[64];
    snprintf(depths, sizeof depths, "search depth 0 %d", MAX_DEPTH);
    say(depths);
    say("search auto");
    say("ready 1");
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, "quit") == 0) return 0;
        answer(line);
    }
    return 0;
}
