// What a set-up's memory verdict means in words: what a set-up that cannot load lacks, and what
// an offloaded one keeps in system RAM (the engine's memory report, engine/api.py _memory).

import * as fmt from "./format.js";

export const FIT_TEXT = { fits: "Fits", offload: "Offload", no: "Won't run" };

/** "needs 40.4 GiB, 36.0 GiB usable" or, short of system RAM, what the offloaded part needs. */
export function shortfall(memory) {
  if (memory.short_of === "system_ram") {
    return `the part in system RAM needs ${fmt.memory(memory.host_need_gb)}, ${fmt.memory(memory.host_usable_gb)} usable of the ${fmt.gibibytes(memory.system_ram_gib)} assumed`;
  }
  return `needs ${fmt.memory(memory.device_need_gb)}, ${fmt.memory(memory.usable_gb)} usable`;
}

/** "11.2 GiB in system RAM (64 GiB assumed)" for a set-up that runs only with offload. */
export function offloadNote(memory) {
  return `${fmt.memory(memory.host_need_gb)} in system RAM (${fmt.gibibytes(memory.system_ram_gib)} assumed)`;
}
