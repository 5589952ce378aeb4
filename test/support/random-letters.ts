/**
 * Bodies of random letters and digits, the incompressible text the storage
 * model was measured with on CouchDB 3.4.3 (snappy cannot shrink them, so a
 * body costs its full size there and in the memory store).
 */
import type { Random } from "../../src/adapters/memory/random.js";

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

export const randomLetters = (random: Random, length: number): string => Array.from({ length }, () => LETTERS[random.int(LETTERS.length)]).join("");
