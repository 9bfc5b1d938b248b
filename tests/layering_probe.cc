// Built on demand by the layering_compiler test, never by default: linked to
// perfkit_machine alone, it may include machine's headers and what they
// expose (LAYERING_PROBE_OK), and must fail to compile when it includes a
// module above machine that it does not link.
#ifdef LAYERING_PROBE_OK
#include "machine/machine.h"
#else
#include "session/session.h"
#endif

int layering_probe() { return 0; }
