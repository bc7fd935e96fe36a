//! LOLWUT: Redis's computer art. Version 5 draws Georg Nees's "Schotter" in Braille
//! characters, version 6 a city skyline in terminal colours, any other version the version
//! line (Redis's lolwut.c, lolwut5.c and lolwut6.c: the same drawing, the same float
//! arithmetic, so rows drawn without chance come out byte for byte as Redis's).

use crate::error::CmdResult;
use crate::exec::Ctx;
use crate::reply::ReplySink;

use super::{is, parse_i64};

/// A canvas of pixels (a colour each).
struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i32, height: i32, color: u8) -> Self {
        Self { width, height, pixels: vec![color; (width as usize) * (height.max(0) as usize)] }
    }

    fn draw_pixel(&mut self, x: i32, y: i32, color: u8) {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return;
        }
        self.pixels[(x + y * self.width) as usize] = color;
    }

    fn pixel(&self, x: i32, y: i32) -> u8 {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return 0;
        }
        self.pixels[(x + y * self.width) as usize]
    }

    /// Bresenham's line.
    fn draw_line(&mut self, mut x1: i32, mut y1: i32, x2: i32, y2: i32, color: u8) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.draw_pixel(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// A square of side `size` centred on x, y, turned by `angle` (C's float and double
    /// steps kept, so the pixels match Redis's).
    // Redis divides by 1.4142135623, not by SQRT_2: the same constant gives the same pixels.
    #[allow(clippy::approx_constant)]
    fn draw_square(&mut self, x: i32, y: i32, size: f32, angle: f32, color: u8) {
        let size = (size as f64 / 1.4142135623) as f32;
        let size = (size as f64).round() as f32;
        let mut k = (std::f64::consts::PI / 4.0 + angle as f64) as f32;
        let (mut px, mut py) = ([0i32; 4], [0i32; 4]);
        for j in 0..4 {
            px[j] = ((k as f64).sin() * size as f64 + x as f64).round() as i32;
            py[j] = ((k as f64).cos() * size as f64 + y as f64).round() as i32;
            k = (k as f64 + std::f64::consts::PI / 2.0) as f32;
        }
        for j in 0..4 {
            self.draw_line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
        }
    }
}

/// C's rand(): 0 to RAND_MAX (2^31 - 1), from the engine's sampling generator seeded once
/// per call.
struct Rand(crate::keyspace::Rng);

const RAND_MAX: i32 = i32::MAX;

impl Rand {
    fn seeded(seed: u64) -> Self {
        Self(crate::keyspace::Rng::new(seed))
    }

    fn next(&mut self) -> i32 {
        (self.0.next_u64() >> 33) as i32
    }
}

/// Georg Nees's "Schotter": rows of squares turning and drifting more as they go down.
fn schotter(cols: i32, per_row: i32, per_col: i32, rand: &mut Rand) -> Canvas {
    let width = cols * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(width, height, 0);
    for y in 0..per_col {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0f32;
            if y > 1 {
                let mut r = [0.0f32; 3];
                for v in &mut r {
                    *v = rand.next() as f32 / RAND_MAX as f32 / per_col as f32 * y as f32;
                }
                for v in &mut r {
                    if rand.next() % 2 != 0 {
                        *v = -*v;
                    }
                }
                angle = r[0];
                sx = (sx as f32 + r[1] * side / 3.0) as i32;
                sy = (sy as f32 + r[2] * side / 3.0) as i32;
            }
            canvas.draw_square(sx, sy, side, angle, 1);
        }
    }
    canvas
}

/// Two by four pixels per Braille character (U+2800 block).
fn render_braille(canvas: &Canvas) -> String {
    let mut text = String::new();
    let mut y = 0;
    while y < canvas.height {
        let mut x = 0;
        while x < canvas.width {
            let bits = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (0, 3), (1, 3)];
            let byte =
                bits.iter()
                    .enumerate()
                    .fold(0u32, |b, (i, &(dx, dy))| if canvas.pixel(x + dx, y + dy) != 0 { b | 1 << i } else { b });
            text.push(char::from_u32(0x2800 + byte).unwrap_or(' '));
            x += 2;
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
        y += 4;
    }
    text
}

/// One skyscraper (colour 0 with windows, or a grey one behind).
struct Skyscraper {
    xoff: i32,
    width: i32,
    height: i32,
    windows: bool,
    color: u8,
}

fn skyscraper(canvas: &mut Canvas, s: &Skyscraper, rand: &mut Rand) {
    let starty = canvas.height - 1;
    let endy = starty - s.height + 1;
    let mut y = starty;
    while y >= endy {
        for x in s.xoff..s.xoff + s.width {
            // The roof is four pixels narrower.
            if y == endy && (x <= s.xoff + 1 || x >= s.xoff + s.width - 2) {
                continue;
            }
            let mut color = s.color;
            if s.windows && x > s.xoff + 1 && x < s.xoff + s.width - 2 && y > endy + 1 && y < starty - 1 {
                let relx = x - (s.xoff + 1);
                let rely = y - (endy + 1);
                // Windows two pixels wide, one tall (terminal cells are not square).
                if (relx / 2) % 2 != 0 && rely % 2 != 0 {
                    loop {
                        color = (1 + rand.next() % 2) as u8;
                        if color != s.color {
                            break;
                        }
                    }
                    if relx % 2 != 0 {
                        color = canvas.pixel(x - 1, y);
                    }
                }
            }
            canvas.draw_pixel(x, y, color);
        }
        y -= 1;
    }
}

fn skyline(canvas: &mut Canvas, rand: &mut Rand) {
    // Grey ones behind, the lighter first, then the dark ones with windows in front.
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += rand.next() % 8;
            let width = 10 + rand.next() % 9;
            let height = if color == 2 {
                canvas.height / 2 + (rand.next() % canvas.height) / 2
            } else {
                canvas.height / 2 + (rand.next() % canvas.height) / 3
            };
            skyscraper(canvas, &Skyscraper { xoff: offset, width, height, windows: false, color }, rand);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += rand.next() % 8;
        let mut width = 5 + rand.next() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = canvas.height / 3 + (rand.next() % canvas.height) / 2;
        skyscraper(canvas, &Skyscraper { xoff: offset, width, height, windows: true, color: 0 }, rand);
        offset += width + 5;
    }
}

fn render_colors(canvas: &Canvas) -> String {
    let mut text = String::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            let escape = match canvas.pixel(x, y) {
                1 => "0;90;100m",
                2 => "0;37;47m",
                3 => "0;97;107m",
                _ => "0;30;40m",
            };
            text.push_str("\x1b[");
            text.push_str(escape);
            text.push_str(" \x1b[0m");
        }
        if y != canvas.height - 1 {
            text.push('\n');
        }
    }
    text
}

/// LOLWUT [VERSION version] [arguments of that version's art].
pub(super) fn lolwut(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let (mut version, mut rest) = (None, &args[1..]);
    if args.len() >= 3 && is(args[1], "VERSION") {
        // As Redis: "%u.0.0" of the number, so 5 and 6 pick their art, anything else the line.
        version = Some(parse_i64(args[2])? as u32);
        rest = &args[3..];
    }
    let number = |i: usize, default: i64, max: i64| -> Result<i64, crate::error::CmdError> {
        Ok(match rest.get(i) {
            Some(arg) => parse_i64(arg)?,
            None => default,
        }
        .clamp(1, max))
    };
    let seed = (ctx.engine.clock.now_us() as u64) ^ ((std::process::id() as u64) << 32);
    let mut rand = Rand::seeded(seed);
    let text = match version {
        Some(5) => {
            let cols = number(0, 66, 1000)?;
            let per_row = number(1, 8, 200)?;
            let per_col = number(2, 12, 200)?;
            let canvas = schotter(cols as i32, per_row as i32, per_col as i32, &mut rand);
            format!(
                "{}\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. {}\n",
                render_braille(&canvas),
                crate::REDIS_VERSION
            )
        }
        Some(6) => {
            let cols = number(0, 80, 1000)?;
            let rows = number(1, 20, 1000)?;
            let mut canvas = Canvas::new(cols as i32, rows as i32, 3);
            skyline(&mut canvas, &mut rand);
            format!(
                "{}\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. {}\n",
                render_colors(&canvas),
                crate::REDIS_VERSION
            )
        }
        _ => format!("Redis ver. {}\n", crate::REDIS_VERSION),
    };
    out.verbatim(b"txt", text.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_two_rows_of_schotter_are_straight() {
        // Rows 0 and 1 use no chance: four squares in a row, Braille all the way.
        let canvas = schotter(20, 4, 2, &mut Rand::seeded(1));
        let text = render_braille(&canvas);
        assert!(text.chars().all(|c| c == '\n' || ('\u{2800}'..='\u{28ff}').contains(&c)), "{text}");
        assert_eq!(text.lines().count() as i32, (canvas.height + 3) / 4);
    }

    #[test]
    fn skylines_fill_the_canvas() {
        let mut canvas = Canvas::new(40, 10, 3);
        skyline(&mut canvas, &mut Rand::seeded(7));
        assert!(canvas.pixels.contains(&0) && canvas.pixels.contains(&3));
        assert_eq!(render_colors(&canvas).lines().count(), 10);
    }
}
