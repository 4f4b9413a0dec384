// Form fields: one value of a JSON schema (or one argument of a call) as an input of the right kind, and read
// back typed as the schema says. The answer card (inbox-forms.js) and the arguments table build on them.

import { make, value as showValue } from "./shared.js";

function pretty(value) {
  return JSON.stringify(value, null, 2);
}

// The schema of a value as it was asked: an edited argument keeps its type.
function describe(value) {
  if (typeof value === "boolean") {
    return { type: "boolean" };
  }
  if (typeof value === "number") {
    return { type: Number.isInteger(value) ? "integer" : "number" };
  }
  if (typeof value === "string") {
    return { type: "string" };
  }
  return { type: "json" };
}

// Text longer than this, or with a line break, gets a box of several lines.
var LONG_TEXT = 60;

// The input for one value of a schema, holding `initial`.
function field(schema, initial) {
  var input;
  if (Array.isArray(schema.enum)) {
    input = make("select");
    schema.enum.forEach(function (choice, position) {
      var option = make("option", typeof choice === "string" ? choice : JSON.stringify(choice));
      option.value = String(position);
      input.appendChild(option);
    });
    var chosen = schema.enum.map(JSON.stringify).indexOf(JSON.stringify(initial));
    input.value = String(chosen >= 0 ? chosen : 0);
  } else if (schema.type === "boolean") {
    input = make("input");
    input.type = "checkbox";
    input.checked = initial === true;
  } else if (schema.type === "integer" || schema.type === "number") {
    input = make("input");
    input.type = "number";
    input.step = schema.type === "integer" ? "1" : "any";
    input.value = typeof initial === "number" ? String(initial) : "";
  } else if (schema.type === "string") {
    var text = typeof initial === "string" ? initial : "";
    var long = text.length > LONG_TEXT || text.indexOf("\n") >= 0 || schema.maxLength > 200;
    input = make(long ? "textarea" : "input");
    if (long) {
      input.rows = Math.min(8, Math.max(3, Math.ceil(text.length / 70) + text.split("\n").length - 1));
    } else {
      input.type = "text";
    }
    input.value = text;
  } else {
    input = make("textarea");
    input.rows = 3;
    input.spellcheck = false;
    input.value = initial === undefined ? "" : pretty(initial);
  }
  return input;
}

// A labelled field for one property of an answer's schema, with its description as a hint.
export function addField(container, prefix, index, name, schema, initial, required) {
  var id = prefix + "-" + index;
  var paragraph = make("p", null, "field");
  var label = make("label", schema.title || name);
  label.setAttribute("for", id);
  paragraph.appendChild(label);
  var input = field(schema, initial);
  input.id = id;
  input.name = name;
  if (required) {
    input.required = true;
  }
  paragraph.appendChild(input);
  if (schema.description) {
    var hint = make("small", schema.description, "hint");
    hint.id = id + "-hint";
    input.setAttribute("aria-describedby", hint.id);
    paragraph.appendChild(hint);
  }
  container.appendChild(paragraph);
  return { name: name, schema: schema, input: input, required: required };
}

// A field's value, typed as its schema says; throws an Error whose message names the field.
export function readField(field) {
  var schema = field.schema;
  var input = field.input;
  var label = schema.title || field.name;
  if (Array.isArray(schema.enum)) {
    return schema.enum[Number(input.value)];
  }
  if (schema.type === "boolean") {
    return input.checked;
  }
  var text = String(input.value || "").trim();
  if (text === "") {
    if (field.required) {
      throw new Error(label + " is required.");
    }
    return undefined;
  }
  if (schema.type === "integer" || schema.type === "number") {
    var number = Number(text);
    if (!isFinite(number) || (schema.type === "integer" && !Number.isInteger(number))) {
      throw new Error(label + " must be " + (schema.type === "integer" ? "a whole number." : "a number."));
    }
    return number;
  }
  if (schema.type === "string") {
    return text;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(label + " must be JSON.");
  }
}

// One argument as a row of `rows`: its name and its value, or, given an `id`, a labelled field holding the value.
// Returns the field ({name, schema, input}) for an editable row, else null.
export function argumentRow(rows, name, value, id) {
  var row = rows.appendChild(make("tr"));
  if (!id) {
    row.appendChild(make("td", name));
    row.appendChild(showValue(make("td"), value));
    return null;
  }
  var label = make("label", name);
  label.setAttribute("for", id);
  row.appendChild(make("td")).appendChild(label);
  var schema = describe(value);
  var input = field(schema, value);
  input.id = id;
  input.name = name;
  row.appendChild(make("td")).appendChild(input);
  return { name: name, schema: schema, input: input, required: false };
}

// The arguments a person changed on one call, or null when none (throws when one cannot be read).
export function changedArgs(fields, asked) {
  var changed = {};
  var any = false;
  fields.forEach(function (one) {
    var value = readField(one);
    if (value !== undefined && JSON.stringify(value) !== JSON.stringify(asked[one.name])) {
      changed[one.name] = value;
      any = true;
    }
  });
  return any ? changed : null;
}
