#!/bin/sh
# Every CUBE_KERNEL of the repository has an entry in the differential test of the two CPU forms
# (tests/unit/phase_forms.c: its table, or its list of excluded planted bugs), so that a new
# kernel is added there. Usage: phase_forms_table.sh <source root>. Exits 1 naming each kernel
# that is missing. A kernel defined by a macro (`CUBE_KERNEL(helpers_fiber_##sfx, ...`) needs an
# entry whose name starts with the text before `##`.
root=${1:?usage: phase_forms_table.sh <source root>}
table=$root/tests/unit/phase_forms.c
# lib/ holds the macro's definition and documentation, not kernels.
names=$(grep -rhoE --include='*.c' --include='*.h' 'CUBE_KERNEL\([[:space:]]*[A-Za-z_][A-Za-z0-9_#]*' \
          "$root/kernels" "$root/examples" "$root/tests" "$root/bench" |
        sed -e 's/^CUBE_KERNEL([[:space:]]*//' | sort -u)
[ -n "$names" ] || { echo "phase_forms_table: no CUBE_KERNEL found under $root"; exit 1; }
missing=0
count=0
for name in $names; do
  count=$((count + 1))
  # In the table as FORMS(name) (X(name) in KERNELS), in excluded[] as the string "name".
  case $name in
    *'##'*) text="\"${name%%##*}" entry="FORMS(${name%%##*}" ;;
    *) text="\"$name\"" entry="FORMS($name)" ;;
  esac
  if ! grep -qF "$entry" "$table" && ! grep -qF "$text" "$table"; then
    echo "phase_forms_table: CUBE_KERNEL $name has no entry in tests/unit/phase_forms.c" \
         "(add it to KERNELS and cases[], or to excluded[] with the reason)"
    missing=1
  fi
done
echo "phase_forms_table: $count CUBE_KERNEL names checked"
exit $missing
