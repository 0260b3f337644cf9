package weka.classifiers.bayes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.classifiers.bayes.hdpbnc.HDPModel;
import weka.classifiers.bayes.hdpbnc.ModelFile;
import weka.classifiers.bayes.hdpbnc.NetworkDrawing;
import weka.classifiers.bayes.hdpbnc.TestFiles;
import weka.classifiers.bayes.hdpbnc.WideModels;
import weka.classifiers.bayes.net.BIFReader;
import weka.core.Attribute;
import weka.core.CheckGOE;
import weka.core.CheckOptionHandler;
import weka.core.DenseInstance;
import weka.core.Instances;
import weka.core.SerializationHelper;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;
import weka.gui.graphvisualizer.BIFParser;

/** The classifier without Python: options, the GUI's checks, a golden model loaded directly. */
class HDPBayesNetTest {

  static Instances golden(String name, String dataFile, String cls) throws Exception {
    Instances data = DataSource.read(TestFiles.data().resolve(dataFile).toString());
    data.setClass(data.attribute(cls));
    return data;
  }

  static HDPBayesNet loaded(String name, Instances data) throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setModel(ModelFile.read(TestFiles.golden().resolve(name + ".hdpbnc")), data);
    return c;
  }

  @Test
  void optionsRoundTrip() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    String[] defaults = c.getOptions();
    HDPBayesNet d = new HDPBayesNet();
    d.setOptions(defaults.clone());
    assertArrayEquals(defaults, d.getOptions());

    String[] opts = {"-S", "tan", "-K", "3", "-E", "m-estimate", "-I", "200", "-B", "20", "-L", "single",
      "-seed", "42", "-python", "/opt/py/bin/python", "-spool", "/tmp/somewhere", "-timeout", "30",
      "-do-not-start-daemon", "-data-format", "arff", "-M", "0.5", "-discretization", "equal-width"};
    HDPBayesNet e = new HDPBayesNet();
    e.setOptions(opts.clone());
    assertEquals("tan", e.getStructure().getSelectedTag().getIDStr());
    assertEquals(3, e.getK());
    assertEquals("m-estimate", e.getEstimator().getSelectedTag().getIDStr());
    assertEquals(200, e.getIterations());
    assertEquals(20, e.getBurnIn());
    assertEquals("single", e.getTying().getSelectedTag().getIDStr());
    assertEquals(42, e.getSeed());
    assertEquals("/opt/py/bin/python", e.getPythonExecutable());
    assertEquals(new File("/tmp/somewhere"), e.getSpoolDirectory());
    assertEquals(30, e.getTimeout());
    assertTrue(e.getDoNotStartDaemon());
    assertEquals("arff", e.getDataFormat().getSelectedTag().getIDStr());
    assertEquals(0.5, e.getM(), 0.0);
    assertEquals("equal-width", e.getDiscretization().getSelectedTag().getIDStr());
    assertEquals(0.5, e.jobParameters().get("m"));
    assertEquals("equal-width", e.jobParameters().get("discretization"));
    // every option set, in the order of their display (what the Experimenter stores)
    assertArrayEquals(opts, e.getOptions());
    HDPBayesNet f = new HDPBayesNet();
    f.setOptions(e.getOptions());
    assertArrayEquals(e.getOptions(), f.getOptions());
    assertEquals(Utils.joinOptions(e.getOptions()), Utils.joinOptions(f.getOptions()));
  }

  @Test
  void noOptionLetterIsOneThatWekasEvaluationUses() throws Exception {
    // weka.Run and Evaluation take their own options out of the command line first: a letter of ours that
    // Evaluation also uses (as -T, the test file, once was for tying) could never reach the classifier
    java.util.Set<String> evaluation = new java.util.HashSet<>();
    Exception h = assertThrows(Exception.class, () -> weka.classifiers.Evaluation.evaluateModel(
      new weka.classifiers.rules.ZeroR(), new String[] {"-h"}));
    String help = h.getMessage();
    help = help.substring(0, help.indexOf("Options specific to"));
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^-([A-Za-z][\\w-]*)").matcher(help);
    while (m.find()) {
      evaluation.add(m.group(1));
    }
    assertTrue(evaluation.contains("T") && evaluation.contains("t") && evaluation.contains("x"), help);
    java.util.Enumeration<weka.core.Option> ours = new HDPBayesNet().listOptions();
    int n = 0;
    while (ours.hasMoreElements()) {
      String name = ours.nextElement().name();
      assertFalse(evaluation.contains(name), "-" + name + " is also an option of weka.classifiers.Evaluation");
      n++;
    }
    assertTrue(n >= 14);
  }

  @Test
  void tyingIsSetWithLFromWekaRun() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(new String[] {"-L", "single"});
    assertEquals("single", c.getTying().getSelectedTag().getIDStr());
    assertEquals("single", c.jobParameters().get("tying"));
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
    "-S foo|-S must be one of nb, tan, kdb, skdb or eskdb, got 'foo'",
    "-E bogus|-E must be one of hdp, m-estimate, laplace or mle, got 'bogus'",
    "-L paper|-L must be one of none, same-parent, level or single, got 'paper'",
    "-discretization foo|-discretization must be one of auto, mdl, stochastic-mdl, stochastic-gain, equal-frequency, equal-width or none, got 'foo'",
    "-data-format csv|-data-format must be one of arrow or arff, got 'csv'",
    "-K abc|-K must be an integer, got 'abc'",
    "-seed abc|-seed must be an integer, got 'abc'",
    "-M x|-M must be a number, got 'x'",
    "-K -1|k (-K) must be an integer >= 0, got -1",
    "-I -1|iterations (-I) must be an integer from 1 to 10000000, or 0 for the structure's default, got -1",
    "-I 10000001|iterations (-I) must be an integer from 1 to 10000000, or 0 for the structure's default, got 10000001",
    "-M -1|m (-M) must be a finite number >= 0, got -1.0",
    "-M NaN|m (-M) must be a finite number >= 0, got NaN",
    "-B -5|burnIn (-B) must be an integer >= -1, got -5",
    "-timeout -1|timeout (-timeout) must be an integer >= 0, got -1",
    "-K 65|k (-K) must be from 0 to 64 for eskdb, got 65",
    "-S kdb -K 65|k (-K) must be from 0 to 64 for kdb, got 65",
    "-S skdb -K 99|k (-K) must be from 0 to 64 for skdb, got 99",
    "-I 100 -B 100|burnIn (-B) must be below the iterations (-I 100), got 100; -1 chooses min(1000, iterations/10)"})
  void badOptionValuesAreRefusedNamingTheOption(String options, String message) {
    HDPBayesNet c = new HDPBayesNet();
    Exception e = assertThrows(Exception.class, () -> c.setOptions(options.split(" ")));
    assertEquals("HDPBayesNet: " + message, e.getMessage());
  }

  @Test
  void badValuesAreRefusedBeforeAnyJobIsWritten(@TempDir Path spool) throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setSpoolDirectory(spool.toFile());
    c.setPythonExecutable("/nonexistent/python");
    assertThrows(IllegalArgumentException.class, () -> c.setK(-1));
    assertThrows(IllegalArgumentException.class, () -> c.setIterations(-1));
    assertThrows(IllegalArgumentException.class, () -> c.setM(-1));
    assertThrows(IllegalArgumentException.class, () -> c.setBurnIn(-2));
    assertThrows(IllegalArgumentException.class, () -> c.setTimeout(-1));
    assertThrows(IllegalArgumentException.class, () -> c.setTying(new weka.core.SelectedTag("kdb",
      HDPBayesNet.TAGS_STRUCTURE)));
    assertEquals(5, c.getK());
    c.setIterations(10);
    c.setBurnIn(10); // each alone is fine; together they are checked before training
    Instances vote = golden("vote", "vote.arff", "Class");
    Exception e = assertThrows(Exception.class, () -> c.buildClassifier(vote));
    assertTrue(e.getMessage().contains("burnIn (-B) must be below the iterations"), e.getMessage());
    assertFalse(Files.exists(spool.resolve("new")), "a job was written");
  }

  @Test
  void nbAndTanIgnoreK() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(new String[] {"-S", "tan", "-K", "99"});
    assertEquals(99, c.getK());
    assertEquals(5, c.jobParameters().get("k"));
    c.setOptions(new String[] {"-S", "nb", "-E", "laplace", "-I", "10", "-B", "50"});
    assertEquals(null, c.jobParameters().get("burn_in"));
  }

  @Test
  void theHelpStatesTheDefaultsAndTheOptionStringLeavesThemOut() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    StringBuilder help = new StringBuilder();
    java.util.Enumeration<weka.core.Option> e = c.listOptions();
    while (e.hasMoreElements()) {
      weka.core.Option o = e.nextElement();
      help.append(o.synopsis()).append('\n').append(o.description()).append('\n');
    }
    String h = help.toString();
    for (String d : new String[] {"(default: eskdb)", "(default: 5)", "(default: hdp)", "5000 otherwise; the paper uses 50000 (default: 0)",
      "(default: -1)", "(default: level)", "(default: 0)", "(default: python3)", "(default: ~/.hdp-bnc/spool",
      "(default: arrow)", "(default: 1.0)", "(default: auto)"}) {
      assertTrue(h.contains(d), d + " missing from:\n" + h);
    }
    // the same text as the GUI's tool tips
    assertTrue(h.contains(c.structureTipText()) && h.contains(c.tyingTipText()) && h.contains(c.MTipText()), h);
    // what the Experimenter and the Explorer's result list store: nothing at its default, so neither
    // this machine's Python nor its spool
    assertEquals("", Utils.joinOptions(c.getOptions()));
    c.setOptions(new String[] {"-S", "tan", "-I", "100"});
    assertEquals("-S tan -I 100", Utils.joinOptions(c.getOptions()));
    c.setPythonExecutable("/opt/python");
    c.setSpoolDirectory(new File("/tmp/spool"));
    assertTrue(Utils.joinOptions(c.getOptions()).contains("-python /opt/python -spool /tmp/spool"));
  }

  @Test
  void wekaCheckOptionHandler() {
    CheckOptionHandler check = new CheckOptionHandler();
    check.setOptionHandler(new HDPBayesNet());
    check.setUserOptions(new String[] {"-S", "nb", "-K", "2", "-I", "100", "-seed", "3", "-do-not-start-daemon"});
    check.setSilent(true);
    check.doTests();
    assertTrue(check.getSuccess(), "CheckOptionHandler failed");
  }

  @Test
  void wekaCheckGOE() {
    CheckGOE check = new CheckGOE();
    check.setObject(new HDPBayesNet());
    check.setSilent(true);
    check.doTests();
    assertTrue(check.getSuccess(), "CheckGOE failed (globalInfo or tool tips)");
  }

  @Test
  void capabilitiesAreCheapAndRight() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setPythonExecutable("/nonexistent/python");
    long t = System.nanoTime();
    for (int i = 0; i < 1000; i++) {
      c.getCapabilities();
    }
    assertTrue((System.nanoTime() - t) / 1e9 < 5);
    Instances numericClass = DataSource.read(TestFiles.data().resolve("diabetes.arff").toString());
    numericClass.setClassIndex(0); // preg: numeric
    assertThrows(Exception.class, () -> c.getCapabilities().testWithFail(numericClass));
    Instances vote = golden("vote", "vote.arff", "Class");
    c.getCapabilities().testWithFail(vote);
  }

  @Test
  void goldenModelThroughTheClassifier() throws Exception {
    Instances data = golden("diabetes-tan-mestimate", "diabetes.arff", "class");
    HDPBayesNet c = loaded("diabetes-tan-mestimate", data);
    List<String> lines = Files.readAllLines(TestFiles.golden().resolve("diabetes-tan-mestimate.proba.csv"));
    for (int i = 0; i < data.numInstances(); i++) {
      String[] f = lines.get(i + 1).split(",");
      double[] p = c.distributionForInstance(data.instance(i));
      assertEquals(Double.parseDouble(f[1]), p[0], 1e-9);
      assertEquals(Double.parseDouble(f[2]), p[1], 1e-9);
    }
    String s = c.toString();
    assertTrue(s.contains("Structure: tan"), s);
    assertTrue(s.contains("plas <- class"), s);
  }

  @Test
  void batchPredictionIsRowByRowPrediction() throws Exception {
    // Weka's evaluation predicts through distributionsForInstances: blocks of rows, tree by tree; every row's
    // figures are exactly those of distributionForInstance, across block boundaries (768 rows), on an ensemble
    // and on a single network (GoldenModelsTest checks blocks of edge rows too)
    for (String[] g : new String[][] {{"diabetes-eskdb-hdp", "diabetes.arff", "class"},
        {"vote-kdb2-hdp", "vote.arff", "Class"}}) {
      Instances data = golden(g[0], g[1], g[2]);
      HDPBayesNet c = loaded(g[0], data);
      assertTrue(c.implementsMoreEfficientBatchPrediction());
      assertTrue(data.numInstances() > HDPBayesNet.PREDICTION_BLOCK || g[0].startsWith("vote"), g[0]);
      double[][] batch = c.distributionsForInstances(data);
      assertEquals(data.numInstances(), batch.length);
      for (int i = 0; i < data.numInstances(); i++) {
        assertArrayEquals(c.distributionForInstance(data.instance(i)), batch[i], 0.0, g[0] + " row " + i);
      }
    }
  }

  @Test
  void classOrderIsMappedByName() throws Exception {
    Instances data = golden("weather-kdb1-hdp", "weather.nominal.arff", "play");
    HDPBayesNet c = loaded("weather-kdb1-hdp", data);
    double[] p = c.distributionForInstance(data.instance(0));
    // the same data with the class labels declared the other way round
    ArrayList<Attribute> atts = new ArrayList<>();
    for (int a = 0; a < data.numAttributes(); a++) {
      atts.add(a == data.classIndex() ? new Attribute("play", Arrays.asList("no", "yes")) : data.attribute(a).copy(
        data.attribute(a).name()));
    }
    Instances flipped = new Instances("flipped", atts, 1);
    flipped.setClassIndex(data.classIndex());
    double[] v = data.instance(0).toDoubleArray();
    v[data.classIndex()] = 1 - v[data.classIndex()];
    flipped.add(new DenseInstance(1, v));
    HDPBayesNet d = loaded("weather-kdb1-hdp", flipped);
    double[] q = d.distributionForInstance(flipped.instance(0));
    assertEquals(p[0], q[1], 1e-15);
    assertEquals(p[1], q[0], 1e-15);
  }

  @Test
  void graphIsXmlBifThatWekaReads() throws Exception {
    Instances data = golden("vote-kdb2-hdp", "vote.arff", "Class");
    HDPBayesNet c = loaded("vote-kdb2-hdp", data);
    String xml = c.graph();
    BIFReader reader = new BIFReader().processString(xml);
    // the class, the attributes drawn, and the node that says how many more there are
    assertEquals(NetworkDrawing.drawnTrees(c.getModel().member(0)).length + 2, reader.getNrOfNodes());
    assertTrue(reader.getNodeName(reader.getNrOfNodes() - 1).matches("\\+\\d+ more"), xml);
    // every attribute has the class and its kDB parents (at most 2) as parents
    for (int n = 0; n < reader.getNrOfNodes() - 1; n++) {
      if (!reader.getNodeName(n).equals("Class")) {
        int np = reader.getNrOfParents(n);
        assertTrue(np >= 1 && np <= 3, reader.getNodeName(n) + " has " + np + " parents");
      }
    }
    new BIFParser(xml, new java.util.ArrayList<>(), new java.util.ArrayList<>()).parse();
    assertEquals(weka.core.Drawable.BayesNet, c.graphType());
  }

  static byte[] serialised(Object o) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    SerializationHelper.write(bytes, o);
    return bytes.toByteArray();
  }

  /**
   * What a result keeps in the Explorer: a copy of the trained classifier (serialised, as Weka's
   * SerializedObject copies it) and the text graph() gave right after training. kDB-2 and kDB-4 on six
   * attributes of 40 values, whose drawing with every table in full would be millions of numbers (the kDB-4
   * one more than a 2 GB heap): the classifier holds its model and no drawing, and the drawing is small.
   */
  @Test
  void aResultKeepsLittleMoreThanTheModel() throws Exception {
    for (int k : new int[] {2, 4}) {
      HDPModel model = WideModels.kdb(6, 40, k);
      HDPBayesNet c = new HDPBayesNet();
      c.setModel(model, WideModels.header(model));
      int graph = c.graph().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
      byte[] kept = serialised(c);
      assertFalse(new String(kept, java.nio.charset.StandardCharsets.ISO_8859_1).contains("<BIF"),
        "the classifier holds a drawing");
      assertTrue(kept.length < 2 * serialised(model).length + 20_000, "kDB-" + k + ": the classifier is "
        + kept.length + " bytes, its model " + serialised(model).length);
      assertTrue(graph < 1_000_000, "kDB-" + k + ": the drawing is " + graph + " bytes");
    }
    // an ensemble of the golden models: a result holds about the model file's size
    Instances vote = golden("vote-eskdb-mestimate", "vote.arff", "Class");
    HDPBayesNet e = loaded("vote-eskdb-mestimate", vote);
    long file = Files.size(TestFiles.golden().resolve("vote-eskdb-mestimate.hdpbnc"));
    long kept = serialised(e).length + e.graph().length();
    assertTrue(kept < 2 * file, "the eskdb result keeps " + kept + " bytes, its model file is " + file);
  }

  @Test
  void savedModelPredictsWithoutPython() throws Exception {
    Instances data = golden("vote-kdb2-hdp", "vote.arff", "Class");
    HDPBayesNet c = loaded("vote-kdb2-hdp", data);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    SerializationHelper.write(bytes, c);
    HDPBayesNet back = (HDPBayesNet) SerializationHelper.read(new ByteArrayInputStream(bytes.toByteArray()));
    for (int i = 0; i < data.numInstances(); i++) {
      assertArrayEquals(c.distributionForInstance(data.instance(i)), back.distributionForInstance(data.instance(i)),
        0.0);
    }
  }

  @Test
  void oneObservedClassNeedsNoDaemon(@TempDir Path tmp) throws Exception {
    Instances data = golden("weather", "weather.nominal.arff", "play");
    Instances yes = new Instances(data, 0);
    for (int i = 0; i < data.numInstances(); i++) {
      if (data.instance(i).classValue() == 0) {
        yes.add(data.instance(i));
      }
    }
    HDPBayesNet c = new HDPBayesNet();
    c.setPythonExecutable("/nonexistent/python");
    c.setSpoolDirectory(tmp.toFile());
    c.buildClassifier(yes);
    double[] p = c.distributionForInstance(data.instance(0));
    assertEquals((9 + 0.5) / 10.0, p[0], 1e-12);
    assertEquals(0.5 / 10.0, p[1], 1e-12);
    assertNotNull(c.toString());
    assertFalse(c.toString().isEmpty());
  }

  @Test
  void noModelYet() {
    HDPBayesNet c = new HDPBayesNet();
    assertEquals("HDPBayesNet: No model built yet.", c.toString());
    assertThrows(Exception.class, c::graph);
  }

  @Test
  void emptyDefaultsAreSensible() {
    HDPBayesNet c = new HDPBayesNet();
    assertTrue(c.getSpoolDirectory().toPath().isAbsolute());
    assertEquals("eskdb", c.getStructure().getSelectedTag().getIDStr());
    assertEquals(0, c.getIterations());
    assertEquals(HDPBayesNet.ESKDB_ITERATIONS, c.resolvedIterations());
    assertEquals(5, c.getK());
    HDPModel none = c.getModel();
    assertEquals(null, none);
  }
}
