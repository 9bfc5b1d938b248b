// node speedscope_check.js SCHEMA FILE: validates a speedscope file against
// speedscope's file-format-schema.json with ajv (the npm packages this
// directory pins), then prints, per event (the profile name's last word),
// the self weight of each leaf frame name: "EVENT\tNAME\tWEIGHT" lines.
'use strict';
const fs = require('fs');
const Ajv = require('ajv');

const [schemaPath, filePath] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const file = JSON.parse(fs.readFileSync(filePath, 'utf8'));
const ajv = new Ajv({allErrors: true, strict: false});
const validate = ajv.compile(schema);
if (!validate(file)) {
  console.error('invalid: ' + ajv.errorsText(validate.errors));
  process.exit(1);
}
const self = new Map();
for (const p of file.profiles) {
  const event = p.name.slice(p.name.lastIndexOf(' ') + 1);
  if (p.samples.length !== p.weights.length) {
    console.error(`profile ${p.name}: ${p.samples.length} samples, ${p.weights.length} weights`);
    process.exit(1);
  }
  let sum = 0;
  p.samples.forEach((stack, i) => {
    sum += p.weights[i];
    const leaf = stack.length ? file.shared.frames[stack[stack.length - 1]].name : '[unknown]';
    const key = event + '\t' + leaf;
    self.set(key, (self.get(key) || 0) + p.weights[i]);
  });
  if (sum !== p.endValue - p.startValue) {
    console.error(`profile ${p.name}: weights sum to ${sum}, endValue ${p.endValue}`);
    process.exit(1);
  }
}
for (const [key, weight] of self) console.log(key + '\t' + weight);
