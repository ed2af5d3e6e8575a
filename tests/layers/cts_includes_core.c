/* Must not compile (CTest layers_cts_includes_core): a conformance-suite file that includes a
   core-private header. The suite is written against the public cubert/*.h headers only; its
   include paths (cubert_add_cts PUBLIC_ONLY) do not reach lib/. */
#include "stream/slots.h"
