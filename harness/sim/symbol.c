/* Names a code address of this executable from its own ELF symbol table,
 * so that a crash report says which function crashed: dladdr() sees only
 * exported symbols, and most of the pager's functions are static. */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/symbol.h"

static struct {
	char *image; /* /proc/self/exe, read whole */
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *names;
	size_t names_len;
	uintptr_t bias; /* where the executable was loaded */
} tab;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int first_object(struct dl_phdr_info *info, size_t size, void *bias)
{
	(void)size;
	*(uintptr_t *)bias = info->dlpi_addr;
	return 1; /* the first object is the executable */
}

static char *read_exe(size_t *len)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof(Elf64_Ehdr))
		buf = malloc((size_t)st.st_size);
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			free(buf);
			buf = NULL;
		}
		got += n > 0 ? (size_t)n : 0;
	}
	close(fd);
	*len = got;
	return buf;
}

static int in_image(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

/* Finds .symtab and its string table; leaves tab.syms NULL when the
 * executable has none (stripped). */
static void load(void)
{
	size_t len = 0;
	char *img = read_exe(&len);
	const Elf64_Ehdr *eh = (const void *)img;

	dl_iterate_phdr(first_object, &tab.bias);
	if (!img || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_image(len, eh->e_shoff,
		      (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
		free(img);
		return;
	}
	const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];

		if (!in_image(len, sh[i].sh_offset, sh[i].sh_size) ||
		    !in_image(len, str->sh_offset, str->sh_size))
			break;
		tab.image = img;
		tab.syms = (const void *)(img + sh[i].sh_offset);
		tab.nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
		tab.names = img + str->sh_offset;
		tab.names_len = str->sh_size;
		return;
	}
	free(img);
}

const char *symbol_name(uintptr_t pc)
{
	pthread_once(&once, load);
	uintptr_t at = pc - tab.bias;

	for (size_t i = 0; i < tab.nsyms; i++) {
		const Elf64_Sym *y = &tab.syms[i];

		if (ELF64_ST_TYPE(y->st_info) == STT_FUNC && y->st_size &&
		    at >= y->st_value && at - y->st_value < y->st_size &&
		    y->st_name < tab.names_len)
			return tab.names + y->st_name;
	}
	return NULL;
}
