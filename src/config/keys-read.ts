/**
 * Which keys of which sections a config decoder reads, found by running it
 * on a recording view of the INI: the decoder itself is the single source
 * of truth for its keys, so a key added to a codec is known at once and a
 * list kept by hand cannot drift from it. Works for decoders that read
 * `ini[section]?.[key]` (every `readValue` does); one that only enumerates a
 * section's keys (`[smoosh.ignore]`, `[admins]`) is registered as taking any key.
 */
import { isInheritedName, type IniSections } from "../core/shared/ini.js";

export type KeysBySection = ReadonlyMap<string, ReadonlySet<string>>;

export function keysReadBy(decode: (ini: IniSections) => unknown, ini: IniSections = {}): KeysBySection {
  const read = new Map<string, Set<string>>();
  const sectionView = (name: string, values: Readonly<Record<string, string>>) =>
    new Proxy(values, {
      get(target, key, receiver) {
        if (typeof key === "string" && !isInheritedName(key)) addKey(read, name, key);
        return Reflect.get(target, key, receiver);
      },
    });
  const iniView = new Proxy(ini, {
    get(target, section, receiver) {
      const values = Reflect.get(target, section, receiver) as Readonly<Record<string, string>> | undefined;
      if (typeof section !== "string" || isInheritedName(section)) return values;
      // Present even when absent from the INI, so `ini[section]?.[key]` still reaches the key.
      return sectionView(section, values ?? {});
    },
  });
  decode(iniView);
  return read;
}

const addKey = (read: Map<string, Set<string>>, section: string, key: string): void => {
  const keys = read.get(section) ?? new Set<string>();
  keys.add(key);
  read.set(section, keys);
};
