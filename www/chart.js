// A tiny canvas line chart: entries held (filled, left scale) and expirations
// per second (line, right scale), with the sweep ceiling (budget × ticks/s)
// dashed on the right scale. No library.

const COLORS = { held: "#0f766e", heldFill: "rgba(15,118,110,0.12)", exp: "#e11d48", ceil: "#a1a1aa", grid: "#e4e4e7", text: "#71717a" };

export class Chart {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas, windowMs = 60_000) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.windowMs = windowMs;
    this.samples = [];
    this.w = 0;
    this.h = 0;
    new ResizeObserver(() => this.#resize()).observe(canvas);
    this.#resize();
  }

  #resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.canvas.clientWidth));
    const h = Math.max(1, Math.round(this.canvas.clientHeight));
    if (w === this.w && h === this.h) return;
    this.w = w;
    this.h = h;
    this.canvas.width = w * dpr;
    this.canvas.height = h * dpr;
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.draw();
  }

  /** @param {{t:number, held:number, rate:number, ceiling:number}} s */
  push(s) {
    this.samples.push(s);
    const cut = s.t - this.windowMs - 2000;
    while (this.samples.length > 2 && this.samples[0].t < cut) this.samples.shift();
  }

  reset() {
    this.samples.length = 0;
    this.draw();
  }

  draw() {
    const { ctx, w, h, samples } = this;
    ctx.clearRect(0, 0, w, h);
    const padL = 44, padR = 44, padT = 10, padB = 18;
    const pw = w - padL - padR, ph = h - padT - padB;
    if (pw <= 10 || ph <= 10) return;
    const now = samples.length ? samples[samples.length - 1].t : 0;
    const t0 = now - this.windowMs;
    const maxHeld = niceMax(Math.max(4, ...samples.map((s) => s.held)));
    const maxRate = niceMax(Math.max(4, ...samples.map((s) => Math.max(s.rate, underPressure(s) ? s.ceiling : 0))));
    const x = (t) => padL + ((t - t0) / this.windowMs) * pw;
    const yL = (v) => padT + ph - (v / maxHeld) * ph;
    const yR = (v) => padT + ph - (v / maxRate) * ph;

    ctx.font = "10px ui-sans-serif, system-ui, sans-serif";
    ctx.lineWidth = 1;
    ctx.strokeStyle = COLORS.grid;
    ctx.fillStyle = COLORS.text;
    for (let i = 0; i <= 4; i++) {
      const y = padT + (ph * i) / 4;
      ctx.beginPath();
      ctx.moveTo(padL, Math.round(y) + 0.5);
      ctx.lineTo(padL + pw, Math.round(y) + 0.5);
      ctx.stroke();
      ctx.textAlign = "right";
      ctx.fillText(short(maxHeld * (1 - i / 4)), padL - 6, y + 3);
      ctx.textAlign = "left";
      ctx.fillText(short(maxRate * (1 - i / 4)), padL + pw + 6, y + 3);
    }
    ctx.textAlign = "left";
    ctx.fillText("−60 s", padL, h - 4);
    ctx.textAlign = "right";
    ctx.fillText("now", padL + pw, h - 4);
    if (samples.length < 2) return;

    ctx.save();
    ctx.beginPath();
    ctx.rect(padL, padT - 2, pw, ph + 4);
    ctx.clip();
    // held: area
    ctx.beginPath();
    ctx.moveTo(x(samples[0].t), yL(0));
    for (const s of samples) ctx.lineTo(x(s.t), yL(s.held));
    ctx.lineTo(x(samples[samples.length - 1].t), yL(0));
    ctx.closePath();
    ctx.fillStyle = COLORS.heldFill;
    ctx.fill();
    line(ctx, samples, x, (s) => yL(s.held), COLORS.held, 2);
    // sweep ceiling (budget × ticks/s), drawn while the sweep runs near it
    ctx.setLineDash([4, 4]);
    line(ctx, samples, x, (s) => yR(underPressure(s) ? s.ceiling : NaN), COLORS.ceil, 1);
    ctx.setLineDash([]);
    line(ctx, samples, x, (s) => yR(s.rate), COLORS.exp, 2);
    ctx.restore();
  }
}

/** Is the sweep working near its ceiling (so the ceiling is worth drawing)? */
function underPressure(s) {
  return s.ceiling > 0 && s.rate >= 0.25 * s.ceiling;
}

function line(ctx, samples, x, y, color, width) {
  ctx.beginPath();
  let pen = false;
  for (const s of samples) {
    const yy = y(s);
    if (Number.isNaN(yy)) {
      pen = false;
      continue;
    }
    if (pen) ctx.lineTo(x(s.t), yy);
    else ctx.moveTo(x(s.t), yy);
    pen = true;
  }
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.lineJoin = "round";
  ctx.stroke();
}

/** A maximum whose quarters are round: 4, 8, 10, 20, 40, 80, 100, … */
function niceMax(v) {
  const q = v / 4;
  const p = 10 ** Math.floor(Math.log10(q));
  for (const m of [1, 2, 2.5, 5, 10]) if (q <= m * p) return 4 * m * p;
  return 40 * p;
}

function short(v) {
  if (v >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (v >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return String(Math.round(v * 10) / 10);
}
