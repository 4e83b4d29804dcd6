#!/usr/bin/env node
// Runs the compiled service (npm start / npm run build produce dist/).
import '../dist/main.js';
