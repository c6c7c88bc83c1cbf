import "../page.mjs";
