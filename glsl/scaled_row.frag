// FSATY by scattering, a dense row i of A: x += y(i) a_i, drawn with additive blending over x.
uniform sampler2D R;        // the dense row, a vector folded like x
uniform sampler2D Y;
uniform float i;
uniform int y_width;
out float result;

void main() {
    result = texRECT(R, WPOS) * texVECTOR(Y, i, y_width);
}
