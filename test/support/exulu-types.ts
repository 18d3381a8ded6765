import { z } from "zod";

/**
 * Exulu's GraphQL types of evaluations as zod schemas, written field by field from the seed
 * (docs.exulu.com, "Evaluations": `type eval_runs`, `type test_cases`, `type eval_sets`). A
 * field of a non-null GraphQL type (`ID!`, `String!`, `Date!`) is required and not null; a nullable
 * one (`String`, `JSON`, `Float`, `Int`, `RBACData`) must be present but may be null; JSON fields
 * carry the shape the seed comments give (`# string[]`). `Date` is an ISO 8601 date-time; RBACData
 * is not described by the seed, so any object. Used by the tests to check what evalfleet writes for
 * Exulu, never by evalfleet itself.
 */

const id = z.string().min(1); // ID!
const date = z.iso.datetime({ offset: true }); // Date!
const rbac = z.record(z.string(), z.unknown()).nullable(); // RBACData
const stringList = z.array(z.string()).nullable(); // JSON # string[]

/** `type eval_runs`. */
export const ExuluEvalRunSchema = z.strictObject({
  id, // ID!
  name: z.string(), // String!
  description: z.string().nullable(), // String
  agent_id: id, // ID!
  test_case_ids: stringList, // JSON # string[]
  eval_functions: stringList, // JSON # string[]
  config: z.unknown(), // JSON
  scoring_method: z.string().nullable(), // String
  pass_threshold: z.number().nullable(), // Float
  timeout_in_seconds: z.number().int().nullable(), // Int
  createdAt: date, // Date!
  updatedAt: date, // Date!
  RBAC: rbac, // RBACData
});

/** `type test_cases`. */
export const ExuluTestCaseSchema = z.strictObject({
  id, // ID!
  name: z.string(), // String!
  description: z.string().nullable(), // String
  inputs: z.array(z.unknown()), // JSON! # UIMessage[]
  expected_output: z.string(), // String!
  expected_tools: stringList, // JSON # string[]
  expected_knowledge_sources: stringList, // JSON # string[]
  expected_agent_tools: stringList, // JSON # string[]
  createdAt: date, // Date!
  updatedAt: date, // Date!
  RBAC: rbac, // RBACData
});

/** `type eval_sets`. */
export const ExuluEvalSetSchema = z.strictObject({
  id, // ID!
  name: z.string(), // String!
  description: z.string().nullable(), // String
  test_case_ids: stringList, // JSON # string[]
  createdAt: date, // Date!
  updatedAt: date, // Date!
  RBAC: rbac, // RBACData
});
