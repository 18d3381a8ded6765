// Python's formatting (shared/py-format.ts): repr() of strings and values, round(x, 3).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { pyRepr, round3 } from "../../shared/py-format.ts";

describe("pyRepr", () => {
  test("strings are single-quoted", () => {
    assert.equal(pyRepr("nope"), "'nope'");
    assert.equal(pyRepr(""), "''");
  });

  test("quotes inside strings follow Python's choice", () => {
    assert.equal(pyRepr("it's"), `"it's"`);
    assert.equal(pyRepr('say "hi"'), `'say "hi"'`);
    assert.equal(pyRepr(`it's "x"`), `'it\\'s "x"'`);
  });

  test("backslashes and newlines are escaped", () => {
    assert.equal(pyRepr("a\\b\nc"), "'a\\\\b\\nc'");
  });

  test("None, True, False", () => {
    assert.equal(pyRepr(null), "None");
    assert.equal(pyRepr(undefined), "None");
    assert.equal(pyRepr(true), "True");
    assert.equal(pyRepr(false), "False");
  });

  test("numbers and lists", () => {
    assert.equal(pyRepr(0), "0");
    assert.equal(pyRepr(1.5), "1.5");
    assert.equal(pyRepr(["a", "b"]), "['a', 'b']");
  });
});

describe("round3", () => {
  test("rounds to milliseconds", () => {
    assert.equal(round3(1.23456), 1.235);
    assert.equal(round3(12.3456789), 12.346);
    assert.equal(round3(0.1 + 0.2), 0.3);
    assert.equal(round3(0.0004), 0);
    assert.equal(round3(2), 2);
    assert.equal(round3(0), 0);
  });

  test("rounds the stored binary value, as Python's round(x, 3) does", () => {
    // 1.2345 is stored as 1.23449999...; Python gives 1.234, naive scaling gives 1.235.
    assert.equal(round3(1.2345), 1.234);
    assert.equal(round3(1.0005), 1);
    assert.equal(round3(0.0005), 0.001);
  });

  test("exact ties go to the even digit, as Python's round does", () => {
    assert.equal(round3(0.0625), 0.062);
    assert.equal(round3(0.1875), 0.188);
    assert.equal(round3(3.0625), 3.062);
  });
});
