/* Must compile (CTest layers_core_includes_core): the control of the two probes beside it, built
   with the core's include paths, so that their failure means the include path and nothing else. */
#include "stream/slots.h"
