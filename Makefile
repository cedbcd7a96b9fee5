# residctl. `make` builds the production library and the harness tool.
#   make gate    the T-1..T-7 gate (README's first command)
#   make test    the whole test suite (README's second command, .ci/run)
#   make tsan    the harness tool and unit tests under ThreadSanitizer
#   make deps    installs missing Debian packages
#   make clean

CC      ?= cc
REV     := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
WARN    := -std=gnu11 -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE -Ipager -Iinvariants -Iharness -Iharness/sim -Istorms -I$(B)
LIBS    := -lpthread -lm
HLIBS   := -lcgroup -lfiu -ldl $(LIBS)

B := build

CORE_SRC := $(wildcard pager/*.c pager/linux/*.c invariants/*.c)
TOOL_SRC := $(filter-out harness/tests/%,$(wildcard harness/*.c harness/*/*.c harness/sim/*/*.c storms/*.c))
TEST_SRC := $(wildcard harness/tests/*.c)

PROD_OBJ := $(CORE_SRC:%.c=$(B)/prod/%.o)
HCORE_OBJ := $(CORE_SRC:%.c=$(B)/h/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(B)/h/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/h/%.o)
TSAN_OBJ := $(CORE_SRC:%.c=$(B)/tsan/%.o) $(TOOL_SRC:%.c=$(B)/tsan/%.o)
TSAN_TEST_OBJ := $(TEST_SRC:%.c=$(B)/tsan/%.o)

all: $(B)/libresid.a $(B)/residctl $(B)/unit-tests

# The revision the manifests record; rewritten only when it changes, so
# that only the files that print it are rebuilt.
$(B)/rev.h: FORCE
	@mkdir -p $(B)
	@echo '#define RESID_REV "$(REV)"' >$@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv $@.new $@

FORCE:

# Production: no fault points, no bug switches, no debug assertions.
$(B)/prod/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC     $<"
	@$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DNDEBUG -MMD -MP -c $< -o $@

# Harness build: bug switches, debug assertions of the invariants.
$(B)/h/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC [h] $<"
	@$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@

# Harness build under ThreadSanitizer (clang; Debian's libclang-rt-14-dev).
$(B)/tsan/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC [t] $<"
	@clang $(WARN) -O1 -g -fsanitize=thread $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@

$(B)/tsan/residctl: $(TSAN_OBJ)
	clang -fsanitize=thread -o $@ $^ $(HLIBS)

$(B)/tsan/unit-tests: $(TSAN_TEST_OBJ) $(filter-out $(B)/tsan/harness/main.o,$(TSAN_OBJ))
	clang -fsanitize=thread -o $@ $^ -lcunit $(HLIBS)

tsan: $(B)/tsan/residctl $(B)/tsan/unit-tests

$(B)/libresid.a: $(PROD_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/libresid-harness.a: $(HCORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/residctl: $(TOOL_OBJ) $(B)/libresid-harness.a
	$(CC) $(CFLAGS) -o $@ $(TOOL_OBJ) $(B)/libresid-harness.a $(HLIBS)

$(B)/unit-tests: $(TEST_OBJ) $(filter-out $(B)/h/harness/main.o,$(TOOL_OBJ)) $(B)/libresid-harness.a
	$(CC) $(CFLAGS) -o $@ $^ -lcunit $(HLIBS)

deps:
	@bash scripts/deps.sh

gate:
	@bash scripts/gate.sh

test:
	@bash ci/test.sh

clean:
	rm -rf $(B)

.PHONY: all deps gate test tsan clean FORCE
-include $(shell find $(B) -name '*.d' 2>/dev/null)
