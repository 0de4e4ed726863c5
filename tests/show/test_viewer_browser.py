"""The viewer in a real browser: headless Chromium, driven with selenium.

Each test opens the page from disk, steps through the whole sweep (keys and buttons), and
checks what the page shows against what tapegrad computes: the value of every step, every
entry of the d%k table, the gradient; and that the page logged no JavaScript error.

They need Debian's ``chromium`` and ``chromium-driver`` packages (``.ci/run`` installs them)
and selenium (in the ``test`` extra); without them they skip, saying which is missing.
Screenshots go to ``$TAPEGRAD_SCREENSHOTS`` when set (the docs' pictures were made with
``TAPEGRAD_SCREENSHOTS=docs/images python -m pytest tests/show/test_viewer_browser.py -n 0``),
else to a temporary directory.
"""
import json
import os
import pathlib
import shutil

import numpy as np
import pytest

import tapegrad
from tapegrad.numbering import numbering
from show_programs import small_mlp

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install -e '.[test]'")
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.wait import WebDriverWait  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="the browser tests need Chromium and its driver: apt-get install chromium chromium-driver "
           f"(missing: {', '.join(n for n, p in (('chromium', CHROMIUM), ('chromedriver', DRIVER)) if p is None)})")


@pytest.fixture(scope="module")
def browser():
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1500,900", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def shots(tmp_path):
    where = os.environ.get("TAPEGRAD_SCREENSHOTS")
    path = pathlib.Path(where) if where else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


def open_page(browser, tmp_path, back, title):
    page = tmp_path / "sweep.html"
    page.write_text(tapegrad.show.to_html(back, title), encoding="utf-8")
    browser.get_log("browser")  # drop what an earlier page logged
    browser.get(page.as_uri())
    return browser


def errors(browser):
    return [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def shown(element, attribute="data-value"):
    return json.loads(element.get_attribute(attribute))


def named(browser, css, name):
    """The element of `css` whose data-name is `name` (names such as p["W1"] hold quotes)."""
    found = [e for e in browser.find_elements(By.CSS_SELECTOR, css) if e.get_attribute("data-name") == name]
    assert len(found) == 1, (css, name)
    return found[0]


def flat(value):
    return np.ravel(np.asarray(value, dtype=float)).tolist()


def walk(browser, back, step):
    """Step through the whole sweep with `step()`; at each position check the step's panel and the
    d%k table against the tape's values. Returns the number of steps."""
    names = numbering(back.tape)
    var = {name: v for v, name in names.items()}
    n = browser.execute_script("return window.tapegradViewer.steps")
    adjoint = {}  # target -> Variable holding its adjoint so far
    assert browser.find_element(By.ID, "pos").text == f"step 0 / {n}"
    for k in range(1, n + 1):
        step()
        assert browser.find_element(By.ID, "pos").text == f"step {k} / {n}"
        detail = browser.find_element(By.ID, "detail")
        name, target = detail.get_attribute("data-var"), detail.get_attribute("data-target")
        assert shown(detail) == flat(var[name].op.val)
        kind = detail.find_element(By.CSS_SELECTOR, ".tag").text
        adjoint[target] = name
        if kind == "add":  # the running total is the accumulation the tape pushed
            total = shown(detail, "data-total")
            assert total == flat(next(op.val for op in back.tape.ops
                                      if getattr(op, "fn", None) is tapegrad.tangents.accum
                                      and op.args[1] is var[name]))
        row = named(browser, "#ybar .ybar-row", target)
        assert shown(row) == shown(detail, "data-total")
        assert "set" in row.get_attribute("class").split() or "add" in row.get_attribute("class").split()
        current = browser.find_element(By.CSS_SELECTOR, "#steps .vrow.current")
        assert current.get_attribute("data-step") == str(k)
    return n


def check_gradient(browser, back, grads, inputs):
    """After the last step: each input's d%k row and the gradient rows hold the gradient grad returns."""
    names = numbering(back.tape)
    for (note, value) in zip(inputs, grads):
        row = named(browser, "#gradient .grad-row", note)
        assert shown(row) == flat(value)
        var = next(v for v in back.tape.inputs if back.tape[v].note == note)
        ybar = named(browser, "#ybar .ybar-row", names[var])
        assert shown(ybar) == flat(value)


def test_readme_example_steps_with_the_arrow_keys(browser, tmp_path, shots):
    """The README's a / (a + b*b): the arrow keys step through all seven steps; every value shown
    is the tape's, the table ends at the gradient, Home and End jump, no JavaScript error."""
    f = lambda a, b: a / (a + b * b)  # noqa: E731
    _, back = tapegrad.pullback(f, 2.0, 3.0)
    back(1.0)
    open_page(browser, tmp_path, back, "a / (a + b*b) at a = 2, b = 3")
    body = browser.find_element(By.TAG_NAME, "body")
    n = walk(browser, back, lambda: body.send_keys(Keys.ARROW_RIGHT))
    assert n == 7
    _, (_, da, db) = tapegrad.grad(f, 2.0, 3.0)
    check_gradient(browser, back, [da, db], ["a", "b"])
    body.send_keys(Keys.ARROW_RIGHT)  # past the end: stays
    assert browser.find_element(By.ID, "pos").text == "step 7 / 7"
    body.send_keys(Keys.HOME)
    assert browser.find_element(By.ID, "pos").text == "step 0 / 7"
    assert browser.find_elements(By.CSS_SELECTOR, "#ybar .ybar-row.pending") != []
    body.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT,
                   Keys.ARROW_LEFT)
    assert browser.find_element(By.ID, "pos").text == "step 4 / 7"
    # step 4 adds the second share of d%2: the pullback of %5 runs, reading no forward value
    detail = browser.find_element(By.ID, "detail")
    assert detail.find_element(By.CSS_SELECTOR, "code").text.startswith("d%2 += d%5 = ")
    body.send_keys(Keys.ARROW_LEFT)
    reads = [r.get_attribute("data-name") for r in browser.find_elements(By.CSS_SELECTOR, "#forward .vrow.reads")]
    holder = [r.get_attribute("data-name") for r in browser.find_elements(By.CSS_SELECTOR, "#forward .vrow.holder")]
    assert (reads, holder) == (["%2", "%5"], ["%6"])  # d%5 = d%6 · (-%2/%5²)
    browser.save_screenshot(str(shots / "viewer-readme-step3.png"))
    body.send_keys(Keys.END)
    assert browser.find_element(By.ID, "pos").text == "step 7 / 7"
    assert errors(browser) == []


def test_small_mlp_steps_with_the_buttons(browser, tmp_path, shots):
    """A small network (notebook 07's): the buttons step through every step; each array value
    shown is the tape's, number for number, and the table ends at the gradient grad returns."""
    loss, params = small_mlp()
    _, back = tapegrad.pullback(loss, params)
    back(1.0)
    open_page(browser, tmp_path, back, "a small MLP's loss")
    button = browser.find_element(By.ID, "next")
    n = walk(browser, back, button.click)
    assert n == 14 and button.get_attribute("disabled") is not None
    _, (_, grads) = tapegrad.grad(loss, params)
    check_gradient(browser, back, [grads[k] for k in ("W1", "b1", "W2", "b2")],
                   ['p["W1"]', 'p["b1"]', 'p["W2"]', 'p["b2"]'])
    browser.find_element(By.ID, "first").click()
    for _ in range(8):
        button.click()
    browser.save_screenshot(str(shots / "viewer-mlp.png"))
    assert errors(browser) == []


def test_a_sweep_of_thousands_of_steps_keeps_few_rows_in_the_page(browser, tmp_path):
    """Three thousand steps: the lists hold only the rows in view, End goes to the last step and
    the gradient, and scrolling brings other rows in."""
    def long(x):
        for _ in range(1000):
            x = np.sin(x) * 0.5 + x
        return x
    _, back = tapegrad.pullback(long, 0.3)
    back(1.0)
    open_page(browser, tmp_path, back, "a thousand turns of a loop")
    n = browser.execute_script("return window.tapegradViewer.steps")
    assert n > 3000
    assert len(browser.find_elements(By.CSS_SELECTOR, "#steps .vrow")) < 80
    assert len(browser.find_elements(By.CSS_SELECTOR, "#forward .vrow")) < 80
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    assert browser.find_element(By.ID, "pos").text == f"step {n} / {n}"
    current = browser.find_element(By.CSS_SELECTOR, "#steps .vrow.current")
    assert current.get_attribute("data-step") == str(n)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#steps .vrow")) < 80
    row = named(browser, "#gradient .grad-row", "x")
    assert shown(row) == [tapegrad.gradient(long, 0.3)[0]]
    browser.execute_script("document.getElementById('steps').scrollTop = 0;"
                           "document.getElementById('steps').dispatchEvent(new Event('scroll'))")
    # the list draws its rows again as the scroll settles: a row found may be replaced before it
    # is read, so the read is retried until a row stays long enough to give its text
    first = WebDriverWait(browser, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda b: b.find_element(By.CSS_SELECTOR, '#steps .vrow[data-step="1"]').text)
    assert first.startswith("1. d%")
    assert errors(browser) == []


def test_a_traced_tape_shows_its_program_and_no_sweep(browser, tmp_path):
    """A tape from trace: the forward program, a note that there is no sweep, disabled buttons."""
    _, tape = tapegrad.trace(lambda a, b: a / (a + b * b), 2.0, 3.0)
    open_page(browser, tmp_path, tape, "trace")
    assert browser.find_element(By.ID, "pos").text == "forward only"
    assert browser.find_element(By.ID, "next").get_attribute("disabled") is not None
    assert [r.get_attribute("data-name") for r in browser.find_elements(By.CSS_SELECTOR, "#forward .vrow")] == [
        "%1", "%2", "%3", "%4", "%5", "%6"]
    assert "no reverse sweep" in browser.find_element(By.ID, "detail").text
    assert errors(browser) == []
