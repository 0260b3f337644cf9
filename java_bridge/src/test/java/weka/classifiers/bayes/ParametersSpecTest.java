package weka.classifiers.bayes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import weka.classifiers.bayes.hdpbnc.Json;
import weka.classifiers.bayes.hdpbnc.TestFiles;
import weka.core.Option;

/**
 * The Weka classifier against the one parameter specification (hdp_plugin/params.py, exported to
 * src/test/resources/parameters.json and checked there by tests/test_params.py): every parameter that
 * Weka offers has the specification's option name and default, accepts every choice of its domain
 * and refuses what lies outside it.
 */
class ParametersSpecTest {

  @SuppressWarnings("unchecked")
  static Map<String, Object> specification() throws Exception {
    String text = new String(Files.readAllBytes(TestFiles.repo().resolve("java_bridge").resolve("src")
      .resolve("test").resolve("resources").resolve("parameters.json")), StandardCharsets.UTF_8);
    return (Map<String, Object>) Json.parse(text);
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> parameters() throws Exception {
    return (List<Map<String, Object>>) specification().get("parameters");
  }

  @Test
  @SuppressWarnings("unchecked")
  void theIterationCapsOfMinusIZeroAndTheBurnInRuleAreTheSpecifications() throws Exception {
    Map<String, Object> auto = (Map<String, Object>) specification().get("auto_iterations");
    Map<String, Object> dense = (Map<String, Object>) specification().get("dense_iterations");
    assertEquals(HDPBayesNet.ESKDB_DENSE_ITERATIONS, ((Number) dense.get("eskdb")).intValue());
    assertEquals(HDPBayesNet.DENSE_ROWS_PER_CLASS, ((Number) dense.get("rows_per_class")).intValue());
    assertEquals(HDPBayesNet.TAGS_STRUCTURE.length, auto.size());
    for (weka.core.Tag t : HDPBayesNet.TAGS_STRUCTURE) {
      String structure = t.getIDStr();
      int cap = ((Number) auto.get(structure)).intValue();
      assertEquals(cap, structure.equals("eskdb") ? HDPBayesNet.ESKDB_ITERATIONS : HDPBayesNet.NETWORK_ITERATIONS,
        structure);
      HDPBayesNet c = new HDPBayesNet();
      c.setOptions(new String[] {"-S", structure, "-I", "0"});
      assertEquals(cap, c.resolvedIterations(), structure);
      // the burn-in is below the iterations a fit runs at most: the same rule as hdp_plugin.params.burn_in_over
      new HDPBayesNet().setOptions(new String[] {"-S", structure, "-B", Integer.toString(cap - 1)});
      assertThrows(Exception.class, () -> new HDPBayesNet().setOptions(new String[] {"-S", structure, "-B",
        Integer.toString(cap)}), structure);
      new HDPBayesNet().setOptions(new String[] {"-S", structure, "-E", "laplace", "-B", Integer.toString(cap)});
      assertTrue(HDPBayesNet.ITERATIONS_TIP.contains(" " + cap + " "), HDPBayesNet.ITERATIONS_TIP);
    }
    Map<String, Object> burnIn = (Map<String, Object>) specification().get("burn_in");
    String rule = "min(" + ((Number) burnIn.get("cap")).intValue() + ", iterations/"
      + ((Number) burnIn.get("divisor")).intValue() + ")";
    assertTrue(HDPBayesNet.BURN_IN_TIP.contains(rule), HDPBayesNet.BURN_IN_TIP);
  }

  static String text(Object v) {
    if (v instanceof Double && ((Double) v) == Math.rint((Double) v) && !(v.toString().contains("E"))) {
      return Double.toString((Double) v); // 1.0 as Java prints it
    }
    return String.valueOf(v);
  }

  @Test
  void everyWekaOptionHasTheSpecificationsNameAndDefault() throws Exception {
    Set<String> offered = new HashSet<>();
    for (Enumeration<Option> e = new HDPBayesNet().listOptions(); e.hasMoreElements();) {
      offered.add(e.nextElement().name());
    }
    int checked = 0;
    for (Map<String, Object> p : parameters()) {
      String weka = (String) p.get("weka");
      if (weka == null) {
        continue;
      }
      assertTrue(offered.contains(weka), "HDPBayesNet has no option -" + weka + " for " + p.get("name"));
      // the specification's default, given explicitly, is a default: getOptions leaves it out
      HDPBayesNet c = new HDPBayesNet();
      c.setOptions(new String[] {"-" + weka, text(p.get("weka_default"))});
      List<String> opts = new ArrayList<>();
      Collections.addAll(opts, c.getOptions());
      assertTrue(!opts.contains("-" + weka), "-" + weka + " " + p.get("weka_default") + " is not Java's default: "
        + opts);
      checked++;
    }
    assertEquals(10, checked);
  }

  @Test
  void everyChoiceIsAcceptedAndNothingElse() throws Exception {
    for (Map<String, Object> p : parameters()) {
      String weka = (String) p.get("weka");
      if (weka == null || !"choice".equals(p.get("kind"))) {
        continue;
      }
      for (Object choice : (List<?>) p.get("choices")) {
        HDPBayesNet c = new HDPBayesNet();
        c.setOptions(new String[] {"-" + weka, (String) choice});
        List<String> opts = new ArrayList<>();
        Collections.addAll(opts, c.getOptions());
        if (!choice.equals(p.get("weka_default"))) {
          int at = opts.indexOf("-" + weka);
          assertTrue(at >= 0 && opts.get(at + 1).equals(choice), weka + " " + choice + ": " + opts);
        }
      }
      Exception e = assertThrows(Exception.class, () -> new HDPBayesNet().setOptions(new String[] {"-" + weka,
        "no-such-value"}));
      assertTrue(e.getMessage().contains("-" + weka), e.getMessage());
    }
  }

  @Test
  void integerBoundsAreTheSpecifications() throws Exception {
    for (Map<String, Object> p : parameters()) {
      String weka = (String) p.get("weka");
      if (weka == null || !"int".equals(p.get("kind")) || p.get("maximum") == null) {
        continue;
      }
      long max = ((Number) p.get("maximum")).longValue();
      long min = ((Number) p.get("minimum")).longValue();
      new HDPBayesNet().setOptions(new String[] {"-" + weka, Long.toString(max), "-S", "eskdb"});
      new HDPBayesNet().setOptions(new String[] {"-" + weka, Long.toString(min), "-S", "eskdb"});
      assertThrows(Exception.class, () -> new HDPBayesNet().setOptions(new String[] {"-" + weka,
        Long.toString(max + 1), "-S", "eskdb"}), weka);
      if (((Number) p.get("weka_default")).longValue() == min - 1) { // -I 0: Weka's "the structure's default"
        new HDPBayesNet().setOptions(new String[] {"-" + weka, Long.toString(min - 1), "-S", "eskdb"});
        assertThrows(Exception.class, () -> new HDPBayesNet().setOptions(new String[] {"-" + weka,
          Long.toString(min - 2), "-S", "eskdb"}), weka);
      } else {
        assertThrows(Exception.class, () -> new HDPBayesNet().setOptions(new String[] {"-" + weka,
          Long.toString(min - 1), "-S", "eskdb"}), weka);
      }
    }
  }

  @Test
  void iterationsZeroIsTheStructuresDefaultAndTravelsAsNull() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    assertEquals(0, c.getIterations());
    assertTrue(c.jobParameters().containsKey("iterations"));
    assertEquals(null, c.jobParameters().get("iterations"));
    c.setOptions(new String[] {"-S", "eskdb", "-I", "0"});
    assertEquals(HDPBayesNet.ESKDB_ITERATIONS, c.resolvedIterations());
    assertTrue(!java.util.Arrays.asList(c.getOptions()).contains("-I"));
    c.setOptions(new String[] {"-S", "kdb"});
    assertEquals(HDPBayesNet.NETWORK_ITERATIONS, c.resolvedIterations());
    c.setOptions(new String[] {"-S", "kdb", "-I", "300"});
    assertEquals(300, c.jobParameters().get("iterations"));
    List<String> opts = new ArrayList<>();
    Collections.addAll(opts, c.getOptions());
    assertEquals("300", opts.get(opts.indexOf("-I") + 1));
    HDPBayesNet again = new HDPBayesNet();
    again.setOptions(c.getOptions());
    assertEquals(300, again.getIterations());
    // burn-in is checked against the resolved number: ESKDB_ITERATIONS for eskdb at -I 0
    String cap = String.valueOf(HDPBayesNet.ESKDB_ITERATIONS);
    Exception e = assertThrows(Exception.class, () -> new HDPBayesNet().setOptions(new String[] {"-S", "eskdb",
      "-B", cap}));
    assertTrue(e.getMessage().contains("burnIn (-B)") && e.getMessage().contains(cap + ", the default for eskdb"),
      e.getMessage());
    new HDPBayesNet().setOptions(new String[] {"-S", "kdb", "-B", "1000"});
  }

  @Test
  void eskdbJobsCarryTheirMembersAndOtherStructuresTheDefault() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(new String[] {"-S", "eskdb", "-members", "7"});
    assertEquals(7, c.jobParameters().get("n_members"));
    assertEquals("auto", c.jobParameters().get("discretization"));
    c.setOptions(new String[] {"-S", "kdb", "-members", "7"});
    assertEquals(HDPBayesNet.DEFAULT_MEMBERS, c.jobParameters().get("n_members"));
    assertArrayEquals(new String[] {"-members", "7"}, subset(eskdb7())); // eskdb is the default: no -S
  }

  private static String[] eskdb7() throws Exception {
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(new String[] {"-members", "7", "-S", "eskdb"});
    return c.getOptions();
  }

  private static String[] subset(String[] opts) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < opts.length; i++) {
      if (opts[i].equals("-S") || opts[i].equals("-members")) {
        out.add(opts[i]);
        out.add(opts[i + 1]);
      }
    }
    return out.toArray(new String[0]);
  }

  static Object specDefault(String name) throws Exception {
    for (Map<String, Object> p : parameters()) {
      if (name.equals(p.get("name"))) {
        return p.get("weka_default");
      }
    }
    throw new IllegalStateException("no parameter " + name);
  }

  /** A text file of the package, its line continuations and line breaks read as spaces. */
  static String prose(java.nio.file.Path file) throws Exception {
    return new String(Files.readAllBytes(file), StandardCharsets.UTF_8).replaceAll("\\\\\\R\\s*", " ")
      .replaceAll("\\s+", " ");
  }

  /**
   * The package's description (Description.props), its README and the classifier's globalInfo state the
   * specification's defaults: the structure and the members of the ensemble, and how auto discretises.
   */
  @Test
  void theDescriptionsStateTheSpecificationsDefaults() throws Exception {
    assertEquals("eskdb", specDefault("structure"), "the default structure changed: update the texts below");
    assertEquals("auto", specDefault("discretization"));
    String members = String.valueOf(specDefault("n_members"));
    java.nio.file.Path bridge = TestFiles.repo().resolve("java_bridge");
    String props = prose(bridge.resolve("src").resolve("main").resolve("package").resolve("Description.props"));
    String readme = prose(bridge.resolve("README.md"));
    String info = new HDPBayesNet().globalInfo().replaceAll("\\s+", " ");
    String sentence = "The default is the ESKDB ensemble of " + members + " members";
    for (String[] text : new String[][] {{"Description.props", props}, {"README.md", readme}, {"globalInfo", info}}) {
      assertTrue(text[1].contains(sentence), text[0] + " does not say: " + sentence);
      assertTrue(!text[1].contains("discretised with MDL;") && !text[1].contains("discretised with MDL (Fayyad and "
        + "Irani);"), text[0] + " says that numeric attributes are discretised with MDL");
    }
    for (String[] text : new String[][] {{"Description.props", props}, {"globalInfo", info}}) {
      assertTrue(text[1].contains("auto, is stochastic-gain for ESKDB and MDL for the other structures")
        || text[1].contains("auto, by stochastic-gain for eskdb and by MDL (Fayyad and Irani) for the other "
        + "structures"), text[0] + " does not say how auto discretises");
    }
    assertTrue(HDPBayesNet.DISCRETIZATION_TIP.contains("auto (stochastic-gain for eskdb, else mdl)"));
  }
}
