/**
 * The HTTP fetch surface refuses a JSON object that names a member twice
 * (src/api/external-http.ts duplicateMember): JSON.parse keeps the last one,
 * a proxy or another parser may read the first. The repeat is named by its
 * path, as the validation errors name fields.
 */
import { duplicateMember } from '../../../src/api/external-http';

it('names a member given twice at the top, in a nested object, and in an object inside an array', () => {
  expect(duplicateMember('{"retries":3,"retries":0}')).toBe('retries');
  expect(duplicateMember('{"failure":{"message":"m","type":"t","message":"n"}}')).toBe('failure.message');
  expect(duplicateMember('{"topics":[{"tenant":"a"},{"tenant":"b","flowType":"o","tenant":"c"}]}')).toBe('topics[1].tenant');
  expect(duplicateMember('{"a":{"b":[1,[2,3],{"c":1,"c":2}]}}')).toBe('a.b[2].c');
});

it('finds no repeat in the same name in different objects, or in a value equal to a name', () => {
  expect(duplicateMember('{"topics":[{"tenant":"a"},{"tenant":"b"}],"failure":{"tenant":"x"}}')).toBeUndefined();
  expect(duplicateMember('{"workerId":"A","failure":{"message":"workerId","type":"message"}}')).toBeUndefined();
  expect(duplicateMember('{"a":["a","a"],"b":"a"}')).toBeUndefined();
});

it('reads strings with escaped quotes and backslashes to their real end', () => {
  // A value ending in a backslash: its closing quote follows an escaped backslash, not an escaped quote.
  expect(duplicateMember('{"a":"x\\\\","a":1}')).toBe('a');
  expect(duplicateMember('{"a":"x\\\\","b":1}')).toBeUndefined();
  // An escaped quote inside a value does not end it: the text after it is no member name.
  expect(duplicateMember('{"a":"say \\"b\\":1, \\"a\\"","b":2}')).toBeUndefined();
  expect(duplicateMember('{"a\\"":1,"a":2}')).toBeUndefined();
  expect(duplicateMember('{"\\u0061":1,"a":2}')).toBe('a'); // the same name, escaped
});
