# residctl. `make` builds the production library and the harness tool.
#   make gate    the T-1..T-7 gate (README's first command)
#   make test    the whole test suite (README's second command, .ci/run)
#   make tsan    the harness tool and unit tests under ThreadSanitizer
#   make simx    the tool whose simulation preempts at unlocked accesses
#   make kernels the kernel matrix under QEMU (kernels/matrix.sh);
#                SHARD=K/N REPORT=FILE runs one shard of it
#   make deps    installs missing Debian packages
#   make engine  the pinned llama.cpp from npm and its driver,
#                build/engine/llama-driver (scripts/engine.sh, docs/engine.md)
#   make install PREFIX=...  the library, its header, resid.pc and the
#                preload of residctl run (libresid-preload.so, docs/run.md)
#   make clean

CC      ?= cc
REV     := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
WARN    := -std=gnu11 -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
# Harness headers are included by their room, "fault/fault.h", from
# -Iharness; which room may include which is harness/floors's table,
# held by ci/borders.sh (docs/harness.md). The pager's headers keep its
# own include path.
CPPFLAGS += -D_GNU_SOURCE -Ipager/include -Ipager -Iinvariants -Iharness -I$(B)
LIBS    := -lpthread -lm
HLIBS   := -lcgroup -lfiu -ljansson -ldl $(LIBS)

B := build

# In harness builds the pager's objects allocate through harness/sim/heap.c,
# which frees what a simulated run that ended early left behind.
HEAP_SYMS := malloc calloc realloc aligned_alloc free
HEAP_RENAME = $(if $(findstring pager/,$<),objcopy $(foreach f,$(HEAP_SYMS),--redefine-sym $(f)=sim_heap_$(f)) $@)

# The simulation build's runtime for the instrumentation (make simx only).
ACCESS_SRC := harness/sim/access.c
CORE_SRC := $(wildcard pager/*.c pager/linux/*.c invariants/*.c)
# (A file at harness/'s top level still builds; ci/rooms.sh asks for its room.)
# T-8's EIO shim is a library of its own beside the engine it fails,
# never linked into the tool; so is run --kernel-mmap's advice shim.
EIO_SRC := engine/eio_shim.c
ADVICE_SRC := harness/run/advice_shim.c
HARNESS_SRC := $(filter-out harness/tests/% $(ACCESS_SRC) $(ADVICE_SRC),$(wildcard harness/*.c harness/*/*.c harness/sim/*/*.c))
STORM_SRC := $(wildcard storms/*.c)
TOOL_SRC := $(HARNESS_SRC) $(STORM_SRC) $(wildcard tool/*.c)
TEST_SRC := $(wildcard harness/tests/*.c)
# The build a replay line names: a hash of the sources the tool is made of
# (not the tests, docs or scripts), so that a line recorded in docs/ replays
# until the code it ran changes (ci/doc-lines.sh).
SIM_SRC := $(sort $(CORE_SRC) $(TOOL_SRC) $(ACCESS_SRC) $(filter-out \
	harness/tests/%,$(wildcard pager/*.h pager/include/*.h pager/linux/*.h invariants/*.h \
	harness/*.h harness/*/*.h harness/*/*.def harness/sim/*/*.h \
	harness/sim/*/*.def storms/*.h tool/*.def)))
SIM_BUILD := $(shell cat $(SIM_SRC) | sha256sum | cut -c1-12)

# The checks at quiescence are the harness's: harness builds only. (The
# harness's other entry points of pager/resid_harness.h are #ifdef
# RESID_HARNESS in their files.)
PROD_SRC := $(filter-out pager/check.c,$(CORE_SRC))
PROD_OBJ := $(PROD_SRC:%.c=$(B)/prod/%.o)
HCORE_OBJ := $(CORE_SRC:%.c=$(B)/h/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(B)/h/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/h/%.o)
TSAN_OBJ := $(CORE_SRC:%.c=$(B)/tsan/%.o) $(TOOL_SRC:%.c=$(B)/tsan/%.o)
TSAN_TEST_OBJ := $(TEST_SRC:%.c=$(B)/tsan/%.o)

all: $(B)/libresid.a $(B)/residctl $(B)/unit-tests $(B)/libresid-preload.so \
	$(B)/libresid-eio.so $(B)/libresid-advice.so

# The revision the manifests record and the build replay lines name;
# rewritten only when it changes, so that only the files that print them
# are rebuilt.
$(B)/rev.h: FORCE
	@mkdir -p $(B)
	@printf '#define RESID_REV "%s"\n#define RESID_SIM_BUILD "%s"\n' \
		'$(REV)' '$(SIM_BUILD)' >$@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv $@.new $@

FORCE:

# Production: no fault points, no bug switches, no debug assertions.
$(B)/prod/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC     $<"
	@$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DNDEBUG -MMD -MP -c $< -o $@

# The production objects again, position-independent, for the preload.
$(B)/pic/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC [pic] $<"
	@$(CC) $(WARN) $(CFLAGS) -fPIC $(CPPFLAGS) -DNDEBUG -MMD -MP -c $< -o $@

# Harness build: bug switches, debug assertions of the invariants.
$(B)/h/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC [h] $<"
	@$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@
	@$(HEAP_RENAME)

# Harness build under ThreadSanitizer (clang; Debian's libclang-rt-14-dev).
$(B)/tsan/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC [t] $<"
	@clang $(WARN) -O1 -g -fsanitize=thread $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@
	@$(HEAP_RENAME)

$(B)/tsan/residctl: $(TSAN_OBJ)
	clang -fsanitize=thread -o $@ $^ $(HLIBS)

$(B)/tsan/unit-tests: $(TSAN_TEST_OBJ) $(filter-out $(B)/tsan/tool/main.o,$(TSAN_OBJ))
	clang -fsanitize=thread -o $@ $^ -lcunit $(HLIBS)

tsan: $(B)/tsan/residctl $(B)/tsan/unit-tests

# The simulation build (docs/simulation.md): the pager and the self-test's
# counter compiled by clang with -fsanitize=thread's instrumentation of
# every load and store, linked not with ThreadSanitizer but with
# harness/sim/access.c, which makes each unprotected shared access a
# scheduling point. The rest is the harness build's objects.
SIMX_SRC := $(wildcard pager/*.c) harness/sim/selfrace.c
SIMX_OBJ := $(SIMX_SRC:%.c=$(B)/simx/%.o) $(B)/simx/access.o \
	$(filter-out $(SIMX_SRC:%.c=$(B)/h/%.o),$(TOOL_OBJ) $(HCORE_OBJ))

$(B)/simx/%.o: %.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@echo "  CC [x] $<"
	@clang $(WARN) $(CFLAGS) -fsanitize=thread $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@
	@$(HEAP_RENAME)

$(B)/simx/access.o: $(ACCESS_SRC)
	@mkdir -p $(dir $@)
	@echo "  CC [x] $<"
	@clang $(WARN) $(CFLAGS) $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@

$(B)/simx/residctl: $(SIMX_OBJ)
	clang $(CFLAGS) -o $@ $^ $(HLIBS)

# The pager mutant of the simulation build's test (ci/sim.sh), linked into
# both builds: the plain simulation passes it, the simulation build may not.
MUT := $(B)/mutant
MUT_PATCH := ci/mutants/unlocked-reserve.patch

$(MUT)/pager/budget.c: pager/budget.c $(MUT_PATCH)
	@mkdir -p $(dir $@)
	@patch -s -o $@ pager/budget.c $(MUT_PATCH)

$(MUT)/h/budget.o: $(MUT)/pager/budget.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@
	@$(HEAP_RENAME)

$(MUT)/simx/budget.o: $(MUT)/pager/budget.c | $(B)/rev.h
	@mkdir -p $(dir $@)
	@clang $(WARN) $(CFLAGS) -fsanitize=thread $(CPPFLAGS) -DRESID_HARNESS -MMD -MP -c $< -o $@
	@$(HEAP_RENAME)

$(MUT)/plain-residctl: $(MUT)/h/budget.o $(filter-out $(B)/h/pager/budget.o,$(TOOL_OBJ) $(HCORE_OBJ))
	$(CC) $(CFLAGS) -o $@ $^ $(HLIBS)

$(MUT)/simx-residctl: $(MUT)/simx/budget.o $(filter-out $(B)/simx/pager/budget.o,$(SIMX_OBJ))
	clang $(CFLAGS) -o $@ $^ $(HLIBS)

simx: $(B)/simx/residctl $(MUT)/plain-residctl $(MUT)/simx-residctl

# One relocatable object whose only global symbols are the functions
# pager/include/resid.h declares: the pager's internal names (ring_push,
# resid_seam_linux, ...) cannot collide with a user's (ci/exports.sh).
# The harness links libresid-harness.a, where they stay visible.
$(B)/libresid.o: $(PROD_OBJ) pager/include/resid.h scripts/api-names.sh
	@ld -r -o $@.all $(PROD_OBJ)
	@bash scripts/api-names.sh >$@.syms
	@objcopy --keep-global-symbols=$@.syms $@.all $@
	@rm -f $@.all $@.syms

$(B)/libresid.a: $(B)/libresid.o
	@rm -f $@
	ar rcs $@ $^

# residctl run's interposer (docs/run.md): the production objects, their
# own calls of the mapping functions renamed to the preload's pass-throughs
# (they never reach its interposer), and only the interposed names exported.
PRELOAD_SRC := $(wildcard pager/preload/*.c)
PRELOAD_SYMS := mmap munmap madvise mprotect mremap
$(B)/pic/libresid-core.o: $(PROD_SRC:%.c=$(B)/pic/%.o)
	@ld -r -o $@.all $^
	@objcopy $(foreach s,$(PRELOAD_SYMS),--redefine-sym $(s)=resid_sys_$(s)) $@.all $@
	@rm -f $@.all

$(B)/libresid-preload.so: $(B)/pic/libresid-core.o $(PRELOAD_SRC:%.c=$(B)/pic/%.o) pager/preload/preload.map
	$(CC) $(CFLAGS) -shared -fPIC -Wl,-z,defs -Wl,--version-script=pager/preload/preload.map \
		-o $@ $(B)/pic/libresid-core.o $(PRELOAD_SRC:%.c=$(B)/pic/%.o) -ldl $(LIBS)

# T-8's test shim (engine/eio_shim.c): pread fails with EIO on a byte
# range of one file. A test artifact beside residctl, never installed.
$(B)/libresid-eio.so: $(EIO_SRC)
	$(CC) $(WARN) $(CFLAGS) -D_GNU_SOURCE -shared -fPIC -Wl,-z,defs -o $@ $< -ldl

# residctl run --kernel-mmap's preload: the advice on the kernel's mappings
# of the file, no pager.
$(B)/libresid-advice.so: $(ADVICE_SRC)
	$(CC) $(WARN) $(CFLAGS) -D_GNU_SOURCE -shared -fPIC -Wl,-z,defs -o $@ $< -ldl

PREFIX ?= /usr/local
$(B)/resid.pc: FORCE
	@mkdir -p $(B)
	@printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' \
		'libdir=$${prefix}/lib' '' 'Name: resid' \
		'Description: application-authoritative residency for a read-only region' \
		'Version: $(REV)' 'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -lresid -lpthread' >$@

install: $(B)/libresid.a $(B)/resid.pc $(B)/libresid-preload.so $(B)/libresid-advice.so
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 pager/include/resid.h $(DESTDIR)$(PREFIX)/include/resid.h
	install -m 644 $(B)/libresid.a $(DESTDIR)$(PREFIX)/lib/libresid.a
	install -m 755 $(B)/libresid-preload.so $(DESTDIR)$(PREFIX)/lib/libresid-preload.so
	install -m 755 $(B)/libresid-advice.so $(DESTDIR)$(PREFIX)/lib/libresid-advice.so
	install -m 644 $(B)/resid.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/resid.pc

$(B)/libresid-harness.a: $(HCORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

# harness/ alone as one object, for ci/rooms.sh: what it leaves undefined
# may be the pager's, the registry's (tool/) or a library's, never a storm's.
$(B)/harness.o: $(HARNESS_SRC:%.c=$(B)/h/%.o)
	@ld -r -o $@ $^

$(B)/residctl: $(TOOL_OBJ) $(B)/libresid-harness.a
	$(CC) $(CFLAGS) -o $@ $(TOOL_OBJ) $(B)/libresid-harness.a $(HLIBS)

$(B)/unit-tests: $(TEST_OBJ) $(filter-out $(B)/h/tool/main.o,$(TOOL_OBJ)) $(B)/libresid-harness.a
	$(CC) $(CFLAGS) -o $@ $^ -lcunit $(HLIBS)

deps:
	@bash scripts/deps.sh

engine:
	@bash scripts/engine.sh

gate:
	@bash scripts/gate.sh

test:
	@bash ci/test.sh

# The mutation campaign, each mutant until its first verdict, then
# results/mutation.md (hours on 2 cores; make test runs a sample).
mutants:
	@nice -n 19 bash scripts/mutate.sh --first-verdict
# make kernels SHARD=K/N REPORT=FILE: one shard of it (docs/campaigns.md);
# KERNEL=bzImage [KERNEL_CONFIG= KERNEL_MODULES=]: your own kernel; NEWEST=1:
# the newest on the mirror; KERNEL_ARGS: more options (docs/kernels.md)
kernels:
	@bash kernels/matrix.sh $(if $(SHARD),--shard $(SHARD)) $(if $(REPORT),--report $(REPORT)) \
		$(if $(KERNEL),--kernel $(KERNEL)) $(if $(KERNEL_CONFIG),--kernel-config $(KERNEL_CONFIG)) \
		$(if $(KERNEL_MODULES),--kernel-modules $(KERNEL_MODULES)) $(if $(NEWEST),--newest) $(KERNEL_ARGS)

clean:
	rm -rf $(B)

.PHONY: all deps engine gate test mutants tsan simx kernels clean install FORCE
-include $(shell find $(B) -name '*.d' 2>/dev/null)
