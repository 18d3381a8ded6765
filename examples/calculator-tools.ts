/**
 * Calculator tools for the OpenAI examples, after Agno's CalculatorTools: declared with zod, so
 * the built-in agent validates the model's arguments before running them.
 */
import { z } from "zod";
import { defineTool } from "evalfleet";

export const add = defineTool({
  name: "add",
  description: "Add two numbers and return the sum.",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

export const multiply = defineTool({
  name: "multiply",
  description: "Multiply two numbers and return the product.",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a * b,
});

export const factorial = defineTool({
  name: "factorial",
  description: "Compute the factorial n! of a whole number n (0 to 170).",
  parameters: z.object({ n: z.number().int().min(0).max(170) }),
  execute: ({ n }) => {
    let result = 1;
    for (let i = 2; i <= n; i++) result *= i;
    return result;
  },
});
