#!/bin/sh
# Managed by Ansible (gpuops.dlserver.os_tuning); run by gpuops-cpufreq.service.
# Usage: cpufreq-governor GOVERNOR
# Writes GOVERNOR to scaling_governor of every CPU that has cpufreq. Succeeds, and says so,
# where there is no cpufreq driver (VMs, containers); fails when a CPU does not offer it.
set -eu
governor="${1:?usage: cpufreq-governor GOVERNOR}"
found=0
failed=0
for file in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
    [ -e "$file" ] || continue
    found=$((found + 1))
    dir=${file%/scaling_governor}
    available=""
    [ -r "$dir/scaling_available_governors" ] && available=$(cat "$dir/scaling_available_governors")
    case " $available " in
        "  " | *" $governor "*) ;;
        *)
            echo "cpufreq-governor: $governor is not offered by $dir (available: $available)" >&2
            failed=1
            continue
            ;;
    esac
    if [ "$(cat "$file")" != "$governor" ]; then
        echo "$governor" > "$file" || failed=1
    fi
done
if [ "$found" -eq 0 ]; then
    echo "cpufreq-governor: no cpufreq driver, nothing to set"
    exit 0
fi
if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "cpufreq-governor: $governor set on $found CPUs"
