// webpack's default entry (./src/index.js); the page itself is ./main.mjs.
import "./main.mjs";
