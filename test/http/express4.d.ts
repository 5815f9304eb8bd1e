// Express 4, installed as `express4@npm:express@4` so both majors are tested; its API is typed like Express 5's
// for the parts the tests use.
declare module 'express4' {
  import express from 'express';
  export default express;
}
