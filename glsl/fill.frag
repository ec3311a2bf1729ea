// Fill: every fragment of the primitive gets the same value (a uniform).
uniform float value;
out float result;

void main() {
    result = value;
}
